package constrain

import "unicode/utf8"

// runeRangeSeqs calls emit for each sequence of byte ranges that together
// match exactly the UTF-8 encodings of the runes in [lo, hi], surrogates
// excluded. It is the usual splitting of a rune range until every part
// encodes with the same length and each byte ranges independently.
func runeRangeSeqs(lo, hi rune, emit func(los, his []byte)) {
	if hi > utf8.MaxRune {
		hi = utf8.MaxRune
	}
	if lo > hi {
		return
	}
	const surrogateMin, surrogateMax = 0xD800, 0xDFFF
	if lo <= surrogateMax && hi >= surrogateMin {
		if lo < surrogateMin {
			runeRangeSeqs(lo, surrogateMin-1, emit)
		}
		if hi > surrogateMax {
			runeRangeSeqs(surrogateMax+1, hi, emit)
		}
		return
	}
	for _, max := range [...]rune{0x7F, 0x7FF, 0xFFFF} {
		if lo <= max && hi > max {
			runeRangeSeqs(lo, max, emit)
			runeRangeSeqs(max+1, hi, emit)
			return
		}
	}
	if hi <= 0x7F {
		emit([]byte{byte(lo)}, []byte{byte(hi)})
		return
	}
	for i := uint(1); i < 4; i++ {
		m := rune(1)<<(6*i) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				runeRangeSeqs(lo, lo|m, emit)
				runeRangeSeqs((lo|m)+1, hi, emit)
				return
			}
			if hi&m != m {
				runeRangeSeqs(lo, (hi&^m)-1, emit)
				runeRangeSeqs(hi&^m, hi, emit)
				return
			}
		}
	}
	var a, z [utf8.UTFMax]byte
	n := utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(z[:], hi)
	emit(a[:n], z[:n])
}

// runeClass matches one character out of sorted, non-overlapping rune
// ranges (pairs lo, hi as regexp/syntax writes them).
func (b *builder) runeClass(ranges []rune) frag {
	s, e := b.state(), b.state()
	for i := 0; i+1 < len(ranges); i += 2 {
		runeRangeSeqs(ranges[i], ranges[i+1], func(los, his []byte) {
			cur := s
			for j := range los {
				next := e
				if j < len(los)-1 {
					next = b.state()
				}
				b.g.edges[cur] = append(b.g.edges[cur], edge{kind: edgeByte, lo: los[j], hi: his[j], to: next})
				cur = next
			}
		})
	}
	return frag{s, e}
}
