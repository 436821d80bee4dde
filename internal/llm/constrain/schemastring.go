package constrain

// JSON Schema strings: lengths, patterns and formats.

func (s *schemaCompiler) str(path string, n *node) (frag, error) {
	lo, err := count(path, n, "minLength", 0)
	if err != nil {
		return frag{}, err
	}
	hi, err := count(path, n, "maxLength", -1)
	if err != nil {
		return frag{}, err
	}
	if hi >= 0 && hi < lo {
		return frag{}, errorf(ErrInvalid, "%s: maxLength is below minLength", path)
	}
	if hi > maxRegexRepeat || lo > maxRegexRepeat {
		return frag{}, errorf(ErrUnsupported, "%s: string lengths above %d", path, maxRegexRepeat)
	}
	content, hasFormat, err := s.format(path, n)
	if err != nil {
		return frag{}, err
	}
	p, hasPattern := n.get("pattern")
	switch {
	case hasPattern && hasFormat:
		return frag{}, errorf(ErrUnsupported, "JSON Schema keyword %q at %s together with %q", "pattern", path, "format")
	case hasPattern:
		if p.kind != nodeString {
			return frag{}, errorf(ErrInvalid, "%s/pattern: must be a string", path)
		}
		re, err := parseRegex(path+"/pattern", p.str)
		if err != nil {
			return frag{}, err
		}
		// Characters that would need escaping are left out, so the raw
		// text between the quotes is the string the pattern sees.
		rc := &regexCompiler{b: s.b, keep: stringChars}
		if content, err = rc.search(path+"/pattern", re); err != nil {
			return frag{}, err
		}
	case !hasFormat:
		return s.j.str(lo, hi), nil
	}
	if lo > 0 || hi >= 0 {
		// The pattern's automaton runs beside a count of characters.
		bounded, ok := s.b.product(content, charCounter(lo, hi))
		if !ok {
			return frag{}, errorf(ErrInvalid, "%s: no string of the pattern or format has a length within minLength and maxLength", path)
		}
		content = bounded
	}
	return s.b.seq(s.b.literal(`"`), content, s.b.literal(`"`)), nil
}
