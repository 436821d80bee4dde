package constrain

import (
	"errors"
	"fmt"
)

// Errors of the package. Every error a compile returns wraps one of them and
// says which part of the constraint it is about.
var (
	// ErrInvalid: the constraint itself is malformed (a schema that is not
	// JSON, a regular expression that does not parse, an empty choice).
	ErrInvalid = errors.New("constrain: invalid constraint")
	// ErrUnsupported: a well-formed constraint uses something the compiler
	// does not implement; the message names the keyword or construct.
	ErrUnsupported = errors.New("constrain: unsupported constraint")
	// ErrTooComplex: the constraint would need more automaton states than
	// Config.MaxStates, or longer than Config.MaxCompileTime to compile.
	ErrTooComplex = errors.New("constrain: constraint too complex")
	// ErrBusy: Config.MaxCompiles other compiles kept this one from its
	// turn for Config.MaxCompileTime; the same constraint may compile
	// later.
	ErrBusy = errors.New("constrain: too many constraints compiling")
	// ErrRejected: Advance was given a token the constraint does not allow.
	ErrRejected = errors.New("constrain: token not allowed by the constraint")
)

func errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)
}

// unsupportedKeyword is the error for a JSON Schema keyword the compiler
// cannot enforce, naming it and where it appears.
func unsupportedKeyword(path, keyword string) error {
	return errorf(ErrUnsupported, "JSON Schema keyword %q at %s is not supported", keyword, path)
}
