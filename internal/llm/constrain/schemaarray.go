package constrain

import "strconv"

// JSON Schema arrays: items, prefixItems and their counts.

func (s *schemaCompiler) array(path string, n *node) (frag, error) {
	lo, err := count(path, n, "minItems", 0)
	if err != nil {
		return frag{}, err
	}
	hi, err := count(path, n, "maxItems", -1)
	if err != nil {
		return frag{}, err
	}
	if hi >= 0 && hi < lo {
		return frag{}, errorf(ErrInvalid, "%s: maxItems is below minItems", path)
	}
	if lo > maxRegexRepeat || hi > maxRegexRepeat {
		return frag{}, errorf(ErrUnsupported, "%s: array lengths above %d", path, maxRegexRepeat)
	}
	var prefix []*node
	if p, ok := n.get("prefixItems"); ok {
		if p.kind != nodeArray {
			return frag{}, errorf(ErrInvalid, "%s/prefixItems: must be an array", path)
		}
		prefix = p.items
	}
	items, hasItems := n.get("items")
	noMore := hasItems && items.kind == nodeBool && !items.bool
	if noMore && lo > len(prefix) {
		return frag{}, errorf(ErrInvalid, "%s: minItems exceeds the items allowed", path)
	}
	b, j := s.b, s.j
	var firstErr error
	item := func(i int) frag {
		var f frag
		var err error
		switch {
		case i < len(prefix):
			f, err = s.schema(path+"/prefixItems/"+strconv.Itoa(i), prefix[i])
		case hasItems:
			f, err = s.schema(path+"/items", items)
		default:
			f = j.anyValue()
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return f
	}
	sep := func() frag { return b.seq(j.ws(), b.literal(","), j.ws()) }
	// rest(i) is elements i onwards; element i > 0 follows a comma.
	var rest func(i int) frag
	rest = func(i int) frag {
		if hi >= 0 && i >= hi || noMore && i >= len(prefix) || firstErr != nil {
			return b.empty()
		}
		if i < len(prefix) {
			e := item(i)
			if i > 0 {
				e = b.seq(sep(), e)
			}
			e = b.seq(e, rest(i+1))
			if i >= lo && i > 0 {
				e = b.opt(e)
			}
			return e
		}
		more := func() frag { return b.seq(sep(), item(i)) }
		need, limit := max(lo-i, 0), -1
		if hi >= 0 {
			limit = hi - i
		}
		if i > 0 {
			return b.repeat(need, limit, more)
		}
		tailLimit := -1
		if limit >= 0 {
			tailLimit = limit - 1
		}
		return b.seq(item(i), b.repeat(max(need-1, 0), tailLimit, more))
	}
	// rest(0) is never empty: an empty array is "[", one gap, "]".
	if hi == 0 || noMore && len(prefix) == 0 {
		return j.emptyBrackets("[", "]"), nil
	}
	body := rest(0)
	if firstErr != nil {
		return frag{}, firstErr
	}
	return j.brackets("[", "]", body, lo == 0), nil
}
