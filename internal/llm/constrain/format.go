package constrain

// String formats are regular languages written to be sound: every string
// they admit is one a validator asserting the format accepts (real dates
// with leap years, octets without leading zeros, labels and addresses
// within their length limits), at the cost of some valid strings (leap
// seconds, quoted e-mail local parts, percent escapes in a host, host
// names over 63 characters).

const (
	ipv4Octet = `(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`
	ipv4      = `(` + ipv4Octet + `\.){3}` + ipv4Octet
	hexGroup  = `[0-9a-fA-F]{1,4}`
	ipv6      = `((` + hexGroup + `:){7}` + hexGroup +
		`|(` + hexGroup + `:){1,7}:` +
		`|(` + hexGroup + `:){1,6}:` + hexGroup +
		`|(` + hexGroup + `:){1,5}(:` + hexGroup + `){1,2}` +
		`|(` + hexGroup + `:){1,4}(:` + hexGroup + `){1,3}` +
		`|(` + hexGroup + `:){1,3}(:` + hexGroup + `){1,4}` +
		`|(` + hexGroup + `:){1,2}(:` + hexGroup + `){1,5}` +
		`|` + hexGroup + `:(:` + hexGroup + `){1,6}` +
		`|:((:` + hexGroup + `){1,7}|:)` +
		`|::(ffff(:0{1,4})?:)?` + ipv4 +
		`|(` + hexGroup + `:){1,4}:` + ipv4 + `)`

	// A date is a real one: days by month, 29 February in leap years.
	monthDay = `((0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|(0[469]|11)-(0[1-9]|[12]\d|30)|02-(0[1-9]|1\d|2[0-8]))`
	leapYear = `(\d\d(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)`
	date     = `(\d{4}-` + monthDay + `|` + leapYear + `-02-29)`
	// Leap seconds are left out: whether :60 is valid depends on the offset.
	timeOfDay = `([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)`

	uuid = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`

	hostLabel = `[a-z0-9]([a-z0-9-]*[a-z0-9])?`
	hostname  = hostLabel + `(\.` + hostLabel + `)*`
	dotAtom   = "[\\w!#$%&'*+/=?^`{|}~-]+(\\.[\\w!#$%&'*+/=?^`{|}~-]+)*"

	uriEscape   = `%[0-9A-Fa-f]{2}`
	uriPchar    = `([\w.~!$&'()*+,;=:@-]|` + uriEscape + `)`
	uriQuery    = `([\w.~!$&'()*+,;=:@/?-]|` + uriEscape + `)*`
	uriUserinfo = `([\w.~!$&'()*+,;=:-]|` + uriEscape + `)*`
	uriHost     = `[\w.~!$&'()*+,;=-]*`
	uri         = `[a-zA-Z][a-zA-Z0-9+.-]*:` +
		`(//(` + uriUserinfo + `@)?` + uriHost + `(:\d*)?(/` + uriPchar + `*)*` +
		`|/?(` + uriPchar + `+(/` + uriPchar + `*)*)?)` +
		`(\?` + uriQuery + `)?(#` + uriQuery + `)?`
)

// maxHostname is the longest host name written, the limit of one label.
const maxHostname = 63

// formatPart is one piece of a format: a regular expression matched
// whole, and a bound on its length in characters (hi 0: none).
type formatPart struct {
	expr   string
	lo, hi int
}

// stringFormats are the formats enforced, as sequences of parts.
var stringFormats = map[string][]formatPart{
	"date":      {{expr: date}},
	"time":      {{expr: timeOfDay}},
	"date-time": {{expr: date + `T` + timeOfDay}},
	"uuid":      {{expr: uuid}},
	"ipv4":      {{expr: ipv4}},
	"ipv6":      {{expr: ipv6}},
	// Host names of up to 63 characters: every label is within its limit
	// without counting labels apart, which would multiply the automaton.
	"hostname": {{expr: hostname, lo: 1, hi: maxHostname}},
	// 64 characters of local part and such a host name: within 254.
	"email": {{expr: dotAtom, lo: 1, hi: 64}, {expr: `@`}, {expr: hostname, lo: 1, hi: maxHostname}},
	"uri":   {{expr: uri}},
}

// assertedFormats are the specification's formats that validators may
// assert; one the compiler does not enforce is refused. Formats outside
// the specification (int32, password) only annotate and are ignored.
var assertedFormats = set("date-time", "date", "time", "duration", "email", "idn-email",
	"hostname", "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
	"uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex")

// format compiles a string format's content (without the quotes); nil
// parts when the format is only an annotation.
func (s *schemaCompiler) format(path string, n *node) (frag, bool, error) {
	v, ok := n.get("format")
	if !ok {
		return frag{}, false, nil
	}
	if v.kind != nodeString {
		return frag{}, false, errorf(ErrInvalid, "%s/format: must be a string", path)
	}
	parts, ok := stringFormats[v.str]
	if !ok {
		if assertedFormats[v.str] {
			return frag{}, false, errorf(ErrUnsupported, "JSON Schema keyword %q at %s: format %q is not supported", "format", path, v.str)
		}
		return frag{}, false, nil
	}
	rc := &regexCompiler{b: s.b, keep: stringChars}
	frags := make([]frag, 0, len(parts))
	for _, p := range parts {
		re, err := parseRegex(path+"/format", p.expr)
		if err != nil {
			return frag{}, false, err
		}
		f, err := rc.whole(path+"/format", re)
		if err != nil {
			return frag{}, false, err
		}
		if p.hi > 0 {
			f, ok = s.b.product(f, charCounter(p.lo, p.hi))
			if !ok {
				return frag{}, false, errorf(ErrInvalid, "%s/format: no %s string", path, v.str)
			}
		}
		frags = append(frags, f)
	}
	return s.b.seq(frags...), true, nil
}
