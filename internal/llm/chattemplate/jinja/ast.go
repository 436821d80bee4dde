package jinja

// The syntax tree. Every node keeps the byte offset of its first token so
// that render errors can name a line and column.

type node interface{ offset() int }

type at struct{ off int }

func (a at) offset() int { return a.off }

// Statements.

type (
	dataNode struct {
		at
		text string
	}
	printNode struct {
		at
		x expr
	}
	ifNode struct {
		at
		cond        expr
		body, else_ []node
	}
	forNode struct {
		at
		targets     []string // one name, or the names of a tuple target
		tuple       bool
		iter, cond  expr // cond may be nil: "for x in xs if cond"
		body, else_ []node
	}
	// setNode assigns value, or the rendered body (with filters) for a block set.
	setNode struct {
		at
		targets []string
		tuple   bool
		attr    string // "set ns.attr = ..." when not empty (targets[0] is ns)
		value   expr
		body    []node
		filters []*filterExpr
	}
	macroNode struct {
		at
		name   string
		params []param
		body   []node
	}
	callBlockNode struct {
		at
		call   *callExpr
		params []param
		body   []node
	}
	filterBlockNode struct {
		at
		filters []*filterExpr
		body    []node
	}
	withNode struct {
		at
		names  []string
		values []expr
		body   []node
	}
	breakNode    struct{ at }
	continueNode struct{ at }
)

type param struct {
	name string
	def  expr // nil: required
}

// Expressions.

type expr interface{ node }

type (
	constExpr struct {
		at
		v Value
	}
	nameExpr struct {
		at
		name string
	}
	listExpr struct {
		at
		items []expr
	}
	tupleExpr struct {
		at
		items []expr
	}
	dictExpr struct {
		at
		keys, values []expr
	}
	attrExpr struct {
		at
		x    expr
		name string
	}
	itemExpr struct {
		at
		x, index expr
	}
	sliceExpr struct {
		at
		x, start, stop, step expr
	}
	callExpr struct {
		at
		fn     expr
		args   []expr
		kwargs []kwarg
		star   expr // *args
		dstar  expr // **kwargs
	}
	filterExpr struct {
		at
		x      expr // nil inside a filter block or block set: the body is the operand
		name   string
		args   []expr
		kwargs []kwarg
	}
	testExpr struct {
		at
		x      expr
		name   string
		args   []expr
		kwargs []kwarg
		negate bool
	}
	unaryExpr struct {
		at
		op string
		x  expr
	}
	binaryExpr struct {
		at
		op   string
		l, r expr
	}
	andExpr struct {
		at
		l, r expr
	}
	orExpr struct {
		at
		l, r expr
	}
	notExpr struct {
		at
		x expr
	}
	compareExpr struct {
		at
		first expr
		ops   []string // "==", "!=", "<", "<=", ">", ">=", "in", "notin"
		rest  []expr
	}
	condExpr struct {
		at
		cond, then, else_ expr
	} // else_ may be nil
)

type kwarg struct {
	name  string
	value expr
}
