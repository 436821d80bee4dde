package webui

import (
	"testing"
	"time"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// settingsFixtures is the settings page with every part filled from xss.
func settingsFixtures(v *viewer) map[string]page {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return map[string]page{
		"settings": {Title: "Settings", Viewer: v, Project: "team/p", Body: settingsView{Project: "team/p", Entity: "team", NewKey: xss, Revoked: xss,
			Keys: []keyRow{
				{APIKey: weft.APIKey{ID: "k", Name: xss, CreatedAt: at}, Current: true, Revoke: "/ui/p/team/p/settings/keys/k/revoke"},
				{APIKey: weft.APIKey{ID: "old", Name: "old", CreatedAt: at, RevokedAt: &at}},
			},
			Members: []weft.Member{{Username: xss, Role: "owner", Since: at}},
			Prices:  []trace.Price{{ID: "p1", LLMID: xss, PromptTokenCost: 2.5e-6, CompletionTokenCost: 1e-5, EffectiveDate: at}}}},
	}
}

func TestPerMillion(t *testing.T) {
	for perToken, want := range map[float64]string{2.5e-6: "2.5", 1e-5: "10", 0.15 / 1e6: "0.15", 0: "0"} {
		if got := perMillion(perToken); got != want {
			t.Errorf("perMillion(%g) = %q, want %q", perToken, got, want)
		}
	}
}
