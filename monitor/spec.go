package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/objects/ref"
)

// Class is the base object class of monitors, as the SDKs publish them.
const Class = "Monitor"

// Monitor is a published Monitor object, read: the shape Weave's SDKs
// publish (weave.flow.monitor.Monitor), with the call filter either under
// call_filter (current SDKs) or at the top level (earlier ones).
type Monitor struct {
	ProjectID string `json:"project_id"`
	// ObjectID and Digest name the version read.
	ObjectID    string `json:"object_id"`
	Digest      string `json:"digest"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// SamplingRate is the share of matching calls scored, 0 to 1 (1 when
	// the object has none, as in Weave).
	SamplingRate float64 `json:"sampling_rate"`
	// OpNames are the op refs (or op names) a call must have, as the calls
	// query's op_names filter reads them ("…:*" for every version); empty
	// matches every op.
	OpNames []string `json:"op_names"`
	// Query is the calls query ({"$expr": …}) a call must also match; nil
	// for none.
	Query json.RawMessage `json:"query,omitempty"`
	// Scorers are object refs of the project's scorers, with digests.
	Scorers []string `json:"scorers"`
	Active  bool     `json:"active"`
	// PublishedBy is the user who published this version: the judges run
	// with that user's authority.
	PublishedBy string `json:"published_by,omitempty"`
}

// maxScorers bounds the scorers of one monitor.
const maxScorers = 16

// maxOpNames bounds the op names of one monitor's filter.
const maxOpNames = 100

// ParseMonitor reads a Monitor object's value stored in projectID. Errors
// are ErrInvalidMonitor naming the member at fault.
func ParseMonitor(projectID string, val json.RawMessage) (*Monitor, error) {
	var raw struct {
		Name         *string          `json:"name"`
		Description  *string          `json:"description"`
		SamplingRate *json.Number     `json:"sampling_rate"`
		Scorers      *json.RawMessage `json:"scorers"`
		CallFilter   *json.RawMessage `json:"call_filter"`
		OpNames      *json.RawMessage `json:"op_names"`
		Query        json.RawMessage  `json:"query"`
		Active       *bool            `json:"active"`
	}
	dec := json.NewDecoder(bytes.NewReader(val))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, weft.Errorf(ErrInvalidMonitor, "a monitor must be an object with sampling_rate, scorers, call_filter and active: %v", err)
	}
	m := &Monitor{ProjectID: projectID, SamplingRate: 1, Active: raw.Active != nil && *raw.Active}
	if raw.Name != nil {
		m.Name = *raw.Name
	}
	if raw.Description != nil {
		m.Description = *raw.Description
	}
	if raw.SamplingRate != nil {
		rate, err := raw.SamplingRate.Float64()
		if err != nil || math.IsNaN(rate) || rate < 0 || rate > 1 {
			return nil, weft.Errorf(ErrInvalidMonitor, "sampling_rate must be a number from 0 to 1, not %s", raw.SamplingRate.String())
		}
		m.SamplingRate = rate
	}
	opNames, query := raw.OpNames, raw.Query
	if raw.CallFilter != nil && !isNull(*raw.CallFilter) {
		var filter struct {
			OpNames *json.RawMessage `json:"op_names"`
			Query   json.RawMessage  `json:"query"`
		}
		if err := json.Unmarshal(*raw.CallFilter, &filter); err != nil {
			return nil, weft.Errorf(ErrInvalidMonitor, "call_filter must be an object with op_names and query")
		}
		opNames, query = filter.OpNames, filter.Query
	}
	if opNames != nil && !isNull(*opNames) {
		if err := json.Unmarshal(*opNames, &m.OpNames); err != nil {
			return nil, weft.Errorf(ErrInvalidMonitor, "op_names must be a list of op names")
		}
	}
	if len(m.OpNames) > maxOpNames {
		return nil, weft.Errorf(ErrInvalidMonitor, "a monitor names at most %d ops", maxOpNames)
	}
	if len(query) > 0 && !isNull(query) && !bytes.Equal(bytes.TrimSpace(query), []byte("{}")) {
		m.Query = query
	}
	if raw.Scorers != nil && !isNull(*raw.Scorers) {
		var scorers []json.RawMessage
		if err := json.Unmarshal(*raw.Scorers, &scorers); err != nil {
			return nil, weft.Errorf(ErrInvalidMonitor, "scorers must be a list of scorer refs")
		}
		for i, s := range scorers {
			var text string
			if json.Unmarshal(s, &text) != nil {
				return nil, weft.Errorf(ErrInvalidMonitor, "scorers[%d] must be the ref of a published scorer object, not an inline value", i)
			}
			if err := checkScorerRef(projectID, text); err != nil {
				return nil, weft.Errorf(ErrInvalidMonitor, "scorers[%d]: %v", i, err)
			}
			m.Scorers = append(m.Scorers, text)
		}
	}
	if len(m.Scorers) > maxScorers {
		return nil, weft.Errorf(ErrInvalidMonitor, "a monitor has at most %d scorers", maxScorers)
	}
	return m, nil
}

// checkScorerRef requires an object ref of projectID with a digest: a
// monitor never reads another project's objects.
func checkScorerRef(projectID, s string) error {
	r, err := ref.Parse(s)
	if err != nil {
		return err
	}
	if r.Kind != ref.KindObject || len(r.Extra) > 0 {
		return fmt.Errorf("%q is not the ref of a scorer object", s)
	}
	if r.ProjectID() != projectID {
		return fmt.Errorf("%q names an object of another project", s)
	}
	if !isDigest(r.Version) {
		return fmt.Errorf("%q must name a version by its digest", s)
	}
	return nil
}

// isDigest tells a version that is a digest from "latest" and "v<N>".
func isDigest(version string) bool {
	if version == "latest" {
		return false
	}
	if rest, ok := strings.CutPrefix(version, "v"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
		return false
	}
	return true
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
