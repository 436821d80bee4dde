package constrain

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// HostilePatternSchema is a 1.1 KB JSON Schema of props string properties,
// each "^\p{L}{1000}$": a thousand copies of a class of some 1,900 states
// per property. Built whole it took 3.6 to 5 GiB and 10 to 25 s before the
// state budget refused it.
func hostilePatternSchema(props int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range props {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","pattern":"^\\p{L}{1000}$"}`, i)
	}
	b.WriteString(`},"required":["p0"]}`)
	return b.String()
}

// hostileConstraints are constraints too large to build, each reaching the
// state budget another way: a repeat of a large class, a chain of classes
// with no repeat, repeats nested in repeats, a repeat of alternatives, a
// length-bounded pattern (the counter's product), a grammar, and generic
// strings.
func hostileConstraints() map[string]Spec {
	schema := func(s string) Spec { return Spec{Kind: KindJSONSchema, Schema: []byte(s)} }
	return map[string]Spec{
		"16 patterns of 1000 letters": schema(hostilePatternSchema(16)),
		"a chain of 400 letter classes": schema(`{"type":"string","pattern":"^` +
			strings.Repeat(`\\p{L}`, 400) + `$"}`),
		"nested repeats":           {Kind: KindRegex, Regex: `((\p{L}\p{N}){30}){30}`},
		"a repeat of alternatives": {Kind: KindRegex, Regex: `(\p{Greek}|\p{Han}|\p{Cyrillic}|\p{L}){1000}`},
		"a length-bounded pattern": schema(`{"type":"string","pattern":"^\\p{L}{1,1000}$","minLength":3,"maxLength":1000}`),
		"a grammar":                {Kind: KindGrammar, Grammar: `root ::= [\p{L}]{1000} [\p{L}]{1000}`},
		"items of bounded strings": schema(`{"type":"array","items":{"type":"string","pattern":"^[\\p{L}\\p{N}]{900,1000}$"},"minItems":1000}`),
	}
}

// Every hostile constraint is refused with ErrTooComplex having allocated
// a bounded number of bytes: the state budget stops the build at the state
// that would go over it, and a repeat whose copies cannot fit stops after
// its second copy.
func TestStateBudgetIsAHardStop(t *testing.T) {
	vocab := NewVocabularyFromBytes([][]byte{[]byte("a"), []byte("é"), []byte(`"`)}, []int{2})
	const maxStates = 50_000
	// A build allocates about 200 bytes a state, twice that at most with
	// its scratch; a refusal must not cost more than a full budget.
	const maxBytes = 400 * maxStates
	for name, spec := range hostileConstraints() {
		t.Run(name, func(t *testing.T) {
			c := NewCompiler(vocab, Config{MaxStates: maxStates})
			var err error
			allocated := allocatedBy(func() { _, err = c.Compile(spec) })
			if !errors.Is(err, ErrTooComplex) {
				t.Fatalf("got %v, want ErrTooComplex", err)
			}
			if allocated > maxBytes {
				t.Fatalf("refusing it allocated %d MiB, want at most %d MiB", allocated>>20, maxBytes>>20)
			}
			t.Logf("refused after %d KiB: %v", allocated>>10, err)
		})
	}
}

// The schema of the report, at the default budget, is refused with the
// budget's error after allocating next to nothing: its first pattern's
// repeat shows after two copies that it cannot fit.
func TestHostilePatternSchemaRefusedAtOnce(t *testing.T) {
	vocab := NewVocabularyFromBytes([][]byte{[]byte("a"), []byte(`"`)}, []int{1})
	c := NewCompiler(vocab, Config{})
	var err error
	allocated := allocatedBy(func() {
		_, err = c.Compile(Spec{Kind: KindJSONSchema, Schema: []byte(hostilePatternSchema(16))})
	})
	want := fmt.Sprintf("needs more than %d automaton states", DefaultMaxStates)
	if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want ErrTooComplex saying it %s", err, want)
	}
	if allocated > 4<<20 {
		t.Fatalf("refusing it allocated %d MiB, want under 4 MiB", allocated>>20)
	}
}

// allocatedBy is how many bytes the heap handed out while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A compile that outlasts Config.MaxCompileTime is refused as too complex;
// one whose context ends returns the context's error.
func TestCompileTimeIsBounded(t *testing.T) {
	vocab := NewVocabularyFromBytes([][]byte{[]byte("a"), []byte(`"`)}, []int{1})
	spec := Spec{Kind: KindRegex, Regex: `\p{L}{20}`}
	_, err := NewCompiler(vocab, Config{MaxCompileTime: time.Nanosecond}).Compile(spec)
	if !errors.Is(err, ErrTooComplex) || !strings.Contains(err.Error(), "longer than 1ns to compile") {
		t.Fatalf("got %v, want ErrTooComplex for the time", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewCompiler(vocab, Config{}).CompileContext(ctx, spec); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if _, err := NewCompiler(vocab, Config{}).Compile(spec); err != nil {
		t.Fatal(err)
	}
}

// Config.MaxCompiles compiles run at once: one more waits for a turn, up
// to MaxCompileTime, then is ErrBusy; a constraint in the cache needs no
// turn.
func TestCompilesAtOnceAreBounded(t *testing.T) {
	vocab := NewVocabularyFromBytes([][]byte{[]byte("a"), []byte(`"`)}, []int{1})
	c := NewCompiler(vocab, Config{MaxCompiles: 1, MaxCompileTime: 50 * time.Millisecond})
	cached := Spec{Kind: KindRegex, Regex: "a+"}
	if _, err := c.Compile(cached); err != nil {
		t.Fatal(err)
	}
	c.turns <- struct{}{} // a compile is running
	if _, err := c.Compile(Spec{Kind: KindRegex, Regex: "a*"}); !errors.Is(err, ErrBusy) {
		t.Fatalf("got %v, want ErrBusy", err)
	}
	if _, err := c.Compile(cached); err != nil {
		t.Fatalf("a cached constraint waited for a turn: %v", err)
	}
	done := make(chan error)
	go func() {
		_, err := c.Compile(Spec{Kind: KindRegex, Regex: "a?"})
		done <- err
	}()
	<-c.turns // the running compile ends: the waiting one takes its turn
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Any constraint text compiles or is refused with one of the package's
// errors, never a panic, and a build allocates within its state budget
// whatever the text asks for. The hostile constraints are its seeds.
func FuzzCompile(f *testing.F) {
	for _, spec := range hostileConstraints() {
		text := spec.Regex + spec.Grammar + string(spec.Schema)
		f.Add(uint8(spec.Kind), text)
	}
	f.Add(uint8(KindJSONSchema), fiftyProperties())
	f.Add(uint8(KindGrammar), `root ::= "a" root | "b"`)
	vocab := NewVocabularyFromBytes([][]byte{[]byte("a"), []byte(`"`)}, []int{1})
	const maxStates = 20_000
	f.Fuzz(func(t *testing.T, kind uint8, text string) {
		spec := Spec{Kind: Kind(kind%5 + 1)}
		switch spec.Kind {
		case KindChoice:
			spec.Choice = strings.Split(text, "|")
		case KindRegex:
			spec.Regex = text
		case KindGrammar:
			spec.Grammar = text
		default:
			spec.Schema = []byte(text)
		}
		var err error
		allocated := allocatedBy(func() { _, err = NewCompiler(vocab, Config{MaxStates: maxStates}).Compile(spec) })
		if err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrTooComplex) {
			t.Fatalf("%q: an error of no kind: %v", text, err)
		}
		if limit := uint64(400*maxStates + 256*len(text) + 1<<20); allocated > limit {
			t.Fatalf("%q: compiling it allocated %d KiB, over %d KiB", text, allocated>>10, limit>>10)
		}
	})
}
