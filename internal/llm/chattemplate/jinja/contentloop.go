package jinja

// LoopsOverField reports whether the template iterates, in a for loop, over
// field of an item of the list variable listVar: "for m in messages" then
// "for part in m['content']" (or m.content), following variables assigned
// from the list ("set loop_messages = messages[1:]") and loop variables.
// Chat servers use it to hand such templates message content as a list of
// parts instead of a string.
func (t *Template) LoopsOverField(listVar, field string) bool {
	w := &fieldLoopWalker{lists: map[string]bool{listVar: true}, items: map[string]bool{}, field: field}
	// Two passes so that aliases assigned after a macro that uses them count.
	w.walk(t.body)
	w.walk(t.body)
	return w.found
}

type fieldLoopWalker struct {
	lists, items map[string]bool
	field        string
	found        bool
}

// root is the variable an expression reads through subscripts, slices,
// attributes and filters: messages[1:] | list -> messages.
func root(e expr) string {
	for {
		switch x := e.(type) {
		case *nameExpr:
			return x.name
		case *sliceExpr:
			e = x.x
		case *filterExpr:
			e = x.x
		case *condExpr:
			if n := root(x.then); n != "" {
				return n
			}
			e = x.else_
		default:
			return ""
		}
	}
}

// isFieldOfItem tells whether e is item[field] or item.field for a loop
// variable that walks the list.
func (w *fieldLoopWalker) isFieldOfItem(e expr) bool {
	for {
		switch x := e.(type) {
		case *filterExpr:
			e = x.x
			continue
		case *attrExpr:
			if x.name == w.field {
				if n, ok := x.x.(*nameExpr); ok && w.items[n.name] {
					return true
				}
			}
		case *itemExpr:
			if k, ok := x.index.(*constExpr); ok && k.v == w.field {
				if n, ok := x.x.(*nameExpr); ok && w.items[n.name] {
					return true
				}
			}
		case *nameExpr:
			return w.items["field:"+x.name]
		}
		return false
	}
}

func (w *fieldLoopWalker) walk(body []node) {
	for _, n := range body {
		switch n := n.(type) {
		case *setNode:
			if n.value != nil && len(n.targets) == 1 && n.attr == "" {
				if w.lists[root(n.value)] {
					w.lists[n.targets[0]] = true
				}
				if w.isFieldOfItem(n.value) {
					w.items["field:"+n.targets[0]] = true
				}
			}
		case *forNode:
			if w.isFieldOfItem(n.iter) {
				w.found = true
			}
			if w.lists[root(n.iter)] && !n.tuple {
				w.items[n.targets[0]] = true
			}
			w.walk(n.body)
			w.walk(n.else_)
		case *ifNode:
			w.walk(n.body)
			w.walk(n.else_)
		case *macroNode:
			w.walk(n.body)
		case *callBlockNode:
			w.walk(n.body)
		case *filterBlockNode:
			w.walk(n.body)
		case *withNode:
			w.walk(n.body)
		}
	}
}
