package constrain

import (
	"fmt"
	"math/bits"
	"slices"
)

// Constraint is a compiled constraint for one vocabulary. It is safe for
// concurrent use: every sequence decoding under it has its own Matcher,
// and they share the automaton and the masks computed so far.
type Constraint struct {
	dfa   *dfa
	vocab *Vocabulary
	key   string
}

// Matcher follows one sequence through a constraint: Mask says which
// tokens may come next, Advance takes the token sampled. It is not safe
// for concurrent use; Clone gives an independent copy (for n > 1 or
// speculative branches) and Rollback undoes tokens.
type Matcher struct {
	c       *Constraint
	state   int32
	ended   bool    // an end-of-sequence token was accepted
	history []int32 // states before each accepted token
}

// NewMatcher starts a sequence at the beginning of the constraint.
func (c *Constraint) NewMatcher() *Matcher {
	return &Matcher{c: c, state: c.dfa.start}
}

// Mask writes the allowed next tokens into mask as a bitset (bit id%64 of
// word id/64 set means allowed); mask must hold Vocabulary.MaskWords
// words. End-of-sequence tokens are allowed exactly when the output so far
// is complete; after one has been accepted nothing is allowed.
func (m *Matcher) Mask(mask []uint64) {
	if m.ended {
		clear(mask)
		return
	}
	copy(mask, m.c.mask(m.state))
}

// Advance moves past token id. It returns an error wrapping ErrRejected,
// leaving the matcher unchanged, when the constraint does not allow it.
func (m *Matcher) Advance(id int) error {
	if m.ended {
		return fmt.Errorf("%w: token %d after the end of the output", ErrRejected, id)
	}
	v := m.c.vocab
	if slices.Contains(v.end, id) {
		if !m.c.accepting(m.state) {
			return fmt.Errorf("%w: end of sequence before the output is complete", ErrRejected)
		}
		m.history = append(m.history, m.state)
		m.ended = true
		return nil
	}
	if id < 0 || id >= len(v.spellings) || len(v.spellings[id]) == 0 {
		return fmt.Errorf("%w: token %d writes no text", ErrRejected, id)
	}
	next := m.c.walk(m.state, v.spellings[id])
	if next == transDead {
		return fmt.Errorf("%w: token %d (%q)", ErrRejected, id, v.spellings[id])
	}
	m.history = append(m.history, m.state)
	m.state = next
	return nil
}

// Complete reports whether the output so far is a whole match: an
// end-of-sequence token may come now.
func (m *Matcher) Complete() bool { return m.ended || m.c.accepting(m.state) }

// Ended reports whether an end-of-sequence token has been accepted.
func (m *Matcher) Ended() bool { return m.ended }

// CanContinue reports whether any more text may follow (false when the
// constraint is complete and admits nothing longer: the engine may stop
// without waiting for the model's end-of-sequence token).
func (m *Matcher) CanContinue() bool {
	return !m.ended && m.c.canContinue(m.state)
}

// Tokens is how many tokens have been accepted.
func (m *Matcher) Tokens() int { return len(m.history) }

// Rollback undoes the last n accepted tokens (all of them when n is larger).
func (m *Matcher) Rollback(n int) {
	n = min(n, len(m.history))
	if n <= 0 {
		return
	}
	m.state = m.history[len(m.history)-n]
	m.history = m.history[:len(m.history)-n]
	m.ended = false
}

// Clone is an independent matcher at the same point.
func (m *Matcher) Clone() *Matcher {
	c := *m
	c.history = slices.Clone(m.history)
	return &c
}

func (c *Constraint) accepting(s int32) bool {
	c.dfa.mu.Lock()
	defer c.dfa.mu.Unlock()
	return c.dfa.states[s].accept
}

func (c *Constraint) canContinue(s int32) bool {
	c.dfa.mu.Lock()
	defer c.dfa.mu.Unlock()
	return len(c.dfa.states[s].stacks) > 0
}

func (c *Constraint) walk(s int32, b []byte) int32 {
	c.dfa.mu.Lock()
	defer c.dfa.mu.Unlock()
	return c.dfa.walk(s, b)
}

// mask is the allowed-token bitset of DFA state s, computed by one walk of
// the vocabulary trie and kept while the state count is within bounds. The
// returned slice is shared and must not be modified.
func (c *Constraint) mask(s int32) []uint64 {
	d := c.dfa
	d.mu.Lock()
	defer d.mu.Unlock()
	if m := d.states[s].mask; m != nil {
		return m
	}
	v := c.vocab
	mask := make([]uint64, v.MaskWords())
	var at [maxTokenBytes + 1]int32
	at[0] = s
	for i := int32(1); i < int32(len(v.label)); {
		depth := v.depth[i]
		if depth > maxTokenBytes {
			i = v.skip[i]
			continue
		}
		t := d.step(at[depth-1], v.label[i])
		if t == transDead {
			i = v.skip[i]
			continue
		}
		at[depth] = t
		for _, id := range v.ids[v.idStart[i]:v.idStart[i+1]] {
			mask[id>>6] |= 1 << (uint(id) & 63)
		}
		i++
	}
	if d.states[s].accept {
		for _, id := range v.end {
			mask[id>>6] |= 1 << (uint(id) & 63)
		}
	}
	if d.masks < d.maxMask {
		d.states[s].mask = mask
		d.masks++
	}
	return mask
}

// maxTokenBytes bounds how long a token's spelling may be for the mask to
// consider it; real vocabularies stay far below.
const maxTokenBytes = 256

// Allowed reports whether bit id of mask is set.
func Allowed(mask []uint64, id int) bool {
	return mask[id>>6]&(1<<(uint(id)&63)) != 0
}

// CountAllowed is how many tokens mask allows.
func CountAllowed(mask []uint64) int {
	n := 0
	for _, w := range mask {
		n += bits.OnesCount64(w)
	}
	return n
}
