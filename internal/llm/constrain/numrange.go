package constrain

import (
	"math/big"
	"strings"
)

// Numeric schemas with minimum, maximum and their exclusive forms compile
// to automata over decimal digits that match exactly the integers in the
// range, built digit by digit: between two bounds of equal length, the
// first digit either equals a bound's (and the rest is bounded by that
// bound's rest) or lies strictly between them (and the rest is free).
// Numbers add a fraction only where every fraction keeps the value within
// the range, so no output ever falls outside it.

// maxBoundDigits bounds how many digits a range's bounds may force an
// output to have, which bounds the automaton.
const maxBoundDigits = 64

// maxDivisor bounds multipleOf for integers: the automaton carries the
// remainder, so its size grows with the divisor.
const maxDivisor = 100

// numBounds is the range a numeric schema allows; nil ends are open.
type numBounds struct {
	lo, hi         *big.Rat
	loExcl, hiExcl bool
}

func (nb numBounds) open() bool { return nb.lo == nil && nb.hi == nil }

// readBounds reads minimum, maximum, exclusiveMinimum and exclusiveMaximum
// (a number, or the older boolean form qualifying minimum and maximum).
func readBounds(path string, n *node) (numBounds, error) {
	var nb numBounds
	num := func(keyword string) (*big.Rat, error) {
		v, ok := n.get(keyword)
		if !ok || v.kind == nodeBool {
			return nil, nil
		}
		if v.kind != nodeNumber {
			return nil, errorf(ErrInvalid, "%s/%s: must be a number", path, keyword)
		}
		r, ok := new(big.Rat).SetString(v.num.String())
		if !ok {
			return nil, errorf(ErrInvalid, "%s/%s: must be a number", path, keyword)
		}
		return r, nil
	}
	flag := func(keyword string) bool {
		v, ok := n.get(keyword)
		return ok && v.kind == nodeBool && v.bool
	}
	// tighten keeps the stricter of the bound so far and r.
	tighten := func(cur *big.Rat, curExcl bool, r *big.Rat, excl bool, lower bool) (*big.Rat, bool) {
		if r == nil {
			return cur, curExcl
		}
		if cur == nil {
			return r, excl
		}
		c := r.Cmp(cur)
		if c == 0 {
			return cur, curExcl || excl
		}
		if (c > 0) == lower {
			return r, excl
		}
		return cur, curExcl
	}
	for _, b := range []struct {
		keyword string
		excl    bool
		lower   bool
	}{
		{"minimum", flag("exclusiveMinimum"), true},
		{"exclusiveMinimum", true, true},
		{"maximum", flag("exclusiveMaximum"), false},
		{"exclusiveMaximum", true, false},
	} {
		r, err := num(b.keyword)
		if err != nil {
			return nb, err
		}
		if b.lower {
			nb.lo, nb.loExcl = tighten(nb.lo, nb.loExcl, r, b.excl, true)
		} else {
			nb.hi, nb.hiExcl = tighten(nb.hi, nb.hiExcl, r, b.excl, false)
		}
	}
	return nb, nil
}

func floorRat(r *big.Rat) *big.Int {
	// Euclidean division by a positive denominator rounds down.
	return new(big.Int).Div(r.Num(), r.Denom())
}

func ceilRat(r *big.Rat) *big.Int {
	return new(big.Int).Neg(floorRat(new(big.Rat).Neg(r)))
}

var one = big.NewInt(1)

// integers is the range of integers the bounds admit; nil ends are open.
func (nb numBounds) integers() (lo, hi *big.Int) {
	if nb.lo != nil {
		if nb.loExcl {
			lo = new(big.Int).Add(floorRat(nb.lo), one)
		} else {
			lo = ceilRat(nb.lo)
		}
	}
	if nb.hi != nil {
		if nb.hiExcl {
			hi = new(big.Int).Sub(ceilRat(nb.hi), one)
		} else {
			hi = floorRat(nb.hi)
		}
	}
	return lo, hi
}

// digitLimit is the largest magnitude an output is given: Config's integer
// digits, or more when a bound needs more (a minimum of 10^20).
func digitLimit(path string, digits int, lo, hi *big.Int) (*big.Int, error) {
	for _, b := range []struct {
		keyword string
		need    int
	}{
		{"minimum", positiveDigits(lo)},
		{"maximum", positiveDigits(new(big.Int).Neg(orZero(hi)))},
	} {
		if b.need > maxBoundDigits {
			return nil, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: bounds beyond %d digits", b.keyword, path, maxBoundDigits)
		}
		digits = max(digits, b.need)
	}
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	return limit.Sub(limit, one), nil
}

// positiveDigits is how many digits x has when above zero, else 0.
func positiveDigits(x *big.Int) int {
	if x == nil || x.Sign() <= 0 {
		return 0
	}
	return len(x.String())
}

func orZero(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return x
}

// clamp closes the open ends of [lo, hi] at ±limit; ok is false when the
// range is empty.
func clamp(lo, hi, limit *big.Int) (*big.Int, *big.Int, bool) {
	neg := new(big.Int).Neg(limit)
	if lo == nil || lo.Cmp(neg) < 0 {
		lo = neg
	}
	if hi == nil || hi.Cmp(limit) > 0 {
		hi = limit
	}
	return lo, hi, lo.Cmp(hi) <= 0
}

// integerRange matches exactly the JSON integers in [lo, hi] (lo <= hi),
// written without a fraction, exponent or "-0".
func (b *builder) integerRange(lo, hi *big.Int) frag {
	var alts []frag
	if lo.Sign() < 0 {
		negHi := hi
		if hi.Sign() >= 0 {
			negHi = big.NewInt(-1)
		}
		// -x for x in [-negHi, -lo]
		alts = append(alts, b.seq(b.literal("-"), b.naturalRange(new(big.Int).Neg(negHi), new(big.Int).Neg(lo))))
	}
	if hi.Sign() >= 0 {
		alts = append(alts, b.naturalRange(maxInt(lo, new(big.Int)), hi))
	}
	return b.alt(alts...)
}

func maxInt(a, c *big.Int) *big.Int {
	if a.Cmp(c) >= 0 {
		return a
	}
	return c
}

// naturalRange matches the decimal numerals, without leading zeros, of the
// integers in [lo, hi] (0 <= lo <= hi): one digit range per length.
func (b *builder) naturalRange(lo, hi *big.Int) frag {
	los, his := lo.String(), hi.String()
	alts := make([]frag, 0, len(his)-len(los)+1)
	for n := len(los); n <= len(his); n++ {
		from, to := los, his
		if n > len(los) {
			from = "1" + strings.Repeat("0", n-1)
		}
		if n < len(his) {
			to = strings.Repeat("9", n)
		}
		alts = append(alts, b.digitRange(from, to))
	}
	return b.alt(alts...)
}

// digitRange matches the digit strings of len(lo) digits from lo to hi
// (equal lengths, lo <= hi as numbers).
func (b *builder) digitRange(lo, hi string) frag {
	if lo == "" {
		return b.empty()
	}
	if lo[0] == hi[0] {
		return b.seq(b.byteRange(lo[0], lo[0]), b.digitRange(lo[1:], hi[1:]))
	}
	rest := len(lo) - 1
	free := func() frag { return b.repeat(rest, rest, func() frag { return b.byteRange('0', '9') }) }
	// When the rest of a bound is its extreme, its first digit joins the
	// free middle.
	lowFull := strings.Trim(lo[1:], "0") == ""
	highFull := strings.Trim(hi[1:], "9") == ""
	midLo, midHi := lo[0]+1, hi[0]-1
	var alts []frag
	if lowFull {
		midLo = lo[0]
	} else {
		alts = append(alts, b.seq(b.byteRange(lo[0], lo[0]), b.digitRange(lo[1:], strings.Repeat("9", rest))))
	}
	if highFull {
		midHi = hi[0]
	} else {
		alts = append(alts, b.seq(b.byteRange(hi[0], hi[0]), b.digitRange(strings.Repeat("0", rest), hi[1:])))
	}
	if midLo <= midHi {
		alts = append(alts, b.seq(b.byteRange(midLo, midHi), free()))
	}
	return b.alt(alts...)
}

// integer compiles an integer schema: its bounds, and multipleOf as a
// remainder carried beside the digits.
func (s *schemaCompiler) integer(path string, n *node) (frag, error) {
	nb, err := readBounds(path, n)
	if err != nil {
		return frag{}, err
	}
	div, err := divisor(path, n)
	if err != nil {
		return frag{}, err
	}
	if nb.open() && div == 1 {
		return s.j.integer(), nil
	}
	lo, hi := nb.integers()
	limit, err := digitLimit(path, s.j.cfg.IntegerDigits, lo, hi)
	if err != nil {
		return frag{}, err
	}
	lo, hi, ok := clamp(lo, hi, limit)
	if !ok {
		return frag{}, errorf(ErrInvalid, "%s: no integer lies within minimum and maximum", path)
	}
	f := s.b.integerRange(lo, hi)
	if div > 1 {
		multiples, ok := s.b.product(f, remainderCounter(div))
		if !ok {
			return frag{}, errorf(ErrInvalid, "%s: no integer within the bounds is divisible by %d", path, div)
		}
		f = multiples
	}
	return f, nil
}

// divisor is what an integer must be divisible by for multipleOf to hold:
// the numerator of multipleOf in lowest terms (n/(p/q) is an integer
// exactly when p divides n). 1 when there is no multipleOf.
func divisor(path string, n *node) (int, error) {
	v, ok := n.get("multipleOf")
	if !ok {
		return 1, nil
	}
	r, ok := new(big.Rat).SetString(v.num.String())
	if v.kind != nodeNumber || !ok || r.Sign() <= 0 {
		return 0, errorf(ErrInvalid, "%s/multipleOf: must be a number above 0", path)
	}
	if !r.Num().IsInt64() || r.Num().Int64() > maxDivisor {
		return 0, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: divisors above %d", "multipleOf", path, maxDivisor)
	}
	return int(r.Num().Int64()), nil
}

// number compiles a number schema. Without bounds it is any number; with
// them, integers in the range, and a fraction after an integer part n
// only when all of (n, n+1) (or (-(n+1), -n) for "-n.") lies in the range.
func (s *schemaCompiler) number(path string, n *node) (frag, error) {
	if _, ok := n.get("multipleOf"); ok {
		return frag{}, errorf(ErrUnsupported, "JSON Schema keyword %q at %s is not supported for numbers", "multipleOf", path)
	}
	nb, err := readBounds(path, n)
	if err != nil {
		return frag{}, err
	}
	if nb.open() {
		return s.j.number(), nil
	}
	b := s.b
	lo, hi := nb.integers()
	limit, err := digitLimit(path, s.j.cfg.IntegerDigits, lo, hi)
	if err != nil {
		return frag{}, err
	}
	var alts []frag
	if ilo, ihi, ok := clamp(lo, hi, limit); ok {
		alts = append(alts, b.integerRange(ilo, ihi))
	}
	// A fraction has a digit other than zero, so n.f lies strictly
	// between n and n+1: n is at least the lower bound, n+1 at most the
	// upper one.
	posLo, posHi := new(big.Int), new(big.Int).Set(limit)
	if nb.lo != nil {
		posLo = maxInt(ceilRat(nb.lo), posLo)
	}
	if nb.hi != nil {
		posHi = minInt(posHi, new(big.Int).Sub(floorRat(nb.hi), one))
	}
	if posLo.Cmp(posHi) <= 0 {
		f, err := s.nonzeroFraction()
		if err != nil {
			return frag{}, err
		}
		alts = append(alts, b.seq(b.naturalRange(posLo, posHi), f))
	}
	// Likewise -n.f lies strictly between -(n+1) and -n.
	negLo, negHi := new(big.Int), new(big.Int).Set(limit)
	if nb.hi != nil {
		negLo = maxInt(new(big.Int).Neg(floorRat(nb.hi)), negLo)
	}
	if nb.lo != nil {
		negHi = minInt(negHi, new(big.Int).Sub(new(big.Int).Neg(ceilRat(nb.lo)), one))
	}
	if negLo.Cmp(negHi) <= 0 {
		f, err := s.nonzeroFraction()
		if err != nil {
			return frag{}, err
		}
		alts = append(alts, b.seq(b.literal("-"), b.naturalRange(negLo, negHi), f))
	}
	if len(alts) == 0 {
		return frag{}, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: the range holds no integer and no whole unit interval, which is what fractions are written within", "minimum", path)
	}
	return b.alt(alts...), nil
}

func minInt(a, c *big.Int) *big.Int {
	if a.Cmp(c) <= 0 {
		return a
	}
	return c
}

// nonzeroFraction is a decimal point and up to Config.FractionDigits
// digits, not all zero.
func (s *schemaCompiler) nonzeroFraction() (frag, error) {
	b := s.b
	f := b.seq(b.literal("."), b.star(b.literal("0")), b.byteRange('1', '9'), b.star(b.byteRange('0', '9')))
	bounded, ok := b.product(f, charCounter(2, s.j.cfg.FractionDigits+1))
	if !ok {
		return frag{}, errorf(ErrInvalid, "no fraction of at most %d digits", s.j.cfg.FractionDigits)
	}
	return bounded, nil
}
