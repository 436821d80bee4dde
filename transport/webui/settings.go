package webui

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weftlabs/weft"
	"github.com/weftlabs/weft/trace"
)

// The settings page of a project: the signed-in user's API keys (created,
// named and revoked here; a new key is shown once; each with when it was
// last used), the members of the project's entity, and the project's model
// prices (per million tokens in the form, per token as Weave's cost/create
// stores them), which price the usage of any model the project's calls
// name, local ones included.

// maxActiveKeys bounds the keys one user may have unrevoked at once.
const maxActiveKeys = 50

// maxPrices bounds the project prices the page lists.
const maxPrices = 500

// maxPricePerMillion bounds a price typed in the form, in USD per million
// tokens.
const maxPricePerMillion = 1_000_000

var (
	// errTooManyKeys: the user has maxActiveKeys unrevoked keys (HTTP 409).
	errTooManyKeys = weft.DefineError(weft.ErrConflict, "Conflict", "too many API keys")
	// errBadSetting: a settings form field that cannot be read (HTTP 400).
	errBadSetting = weft.DefineError(weft.ErrInvalid, "InvalidRequest", "invalid setting")
)

// settingsView is the data of the settings page.
type settingsView struct {
	Project, Entity string
	Keys            []keyRow
	// NewKey is the key just created, shown once; Revoked the key just
	// revoked.
	NewKey, Revoked string
	Members         []weft.Member
	Prices          []trace.Price
	// Prices are per token; the page shows them per million.
}

// keyRow is one of the user's keys.
type keyRow struct {
	weft.APIKey
	Current bool // the key this sign-in used
	Revoke  string
}

// perMillion is a per-token price per million tokens, as the page shows it:
// ten significant digits, so that the float product of a price typed per
// million reads as typed (2.5, not 2.4999999999999996).
func perMillion(perToken float64) string {
	return strconv.FormatFloat(perToken*1e6, 'g', 10, 64)
}

// settingsPage serves the settings of a project.
func (h *Handler) settingsPage(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	h.renderSettings(w, r, v, projectID, "")
}

// renderSettings draws the settings page, with newKey shown once when set.
func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, v *viewer, projectID, newKey string) {
	ctx := r.Context()
	entity, _, _ := strings.Cut(projectID, "/")
	data := settingsView{Project: projectID, Entity: entity, NewKey: newKey}
	keys, err := h.cfg.Identity.APIKeys(ctx, v.principal.UserID)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	for _, k := range keys {
		if k.RevokedAt != nil && k.ID == r.URL.Query().Get("revoked") {
			data.Revoked = k.Name
		}
		data.Keys = append(data.Keys, keyRow{APIKey: k, Current: k.ID == v.principal.KeyID,
			Revoke: projectPath(projectID, "settings/keys/", pathSegment(k.ID), "/revoke")})
	}
	if data.Members, err = h.cfg.Identity.Members(ctx, entity); err != nil {
		h.internalError(w, r, err)
		return
	}
	prices, err := h.cfg.Trace.CostQuery(ctx, &trace.CostQueryReq{ProjectID: projectID, Limit: maxPrices})
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	data.Prices = prices.Results
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, http.StatusOK, "settings", page{Title: "Settings · " + projectID, Viewer: v, Project: projectID, Body: data})
}

// createKey issues the signed-in user a new API key named by the form and
// shows it once, in the answer itself (never in a URL or a redirect).
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if err := checkSettingName("name", name); err != nil {
		h.refuse(w, r, err)
		return
	}
	ctx := r.Context()
	keys, err := h.cfg.Identity.APIKeys(ctx, v.principal.UserID)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if active := slices.DeleteFunc(keys, func(k weft.APIKey) bool { return k.RevokedAt != nil }); len(active) >= maxActiveKeys {
		h.refuse(w, r, weft.Errorf(errTooManyKeys, "you have %d keys in use; revoke one first", maxActiveKeys))
		return
	}
	key, err := h.cfg.Identity.CreateAPIKey(ctx, v.principal.Username, name)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.renderSettings(w, r, v, projectID, key)
}

// revokeKey revokes one of the signed-in user's keys; revoking the key of
// this sign-in ends it.
func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	keyID := r.PathValue("keyID")
	keys, err := h.cfg.Identity.APIKeys(ctx, v.principal.UserID)
	if err != nil {
		h.internalError(w, r, err)
		return
	}
	if !slices.ContainsFunc(keys, func(k weft.APIKey) bool { return k.ID == keyID }) {
		h.refuse(w, r, weft.Errorf(weft.ErrUnknownKey, "you have no API key %q", truncate(keyID, 40)))
		return
	}
	if err := h.cfg.Identity.RevokeAPIKey(ctx, keyID); err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "settings")+"?revoked="+url.QueryEscape(keyID), http.StatusSeeOther)
}

// addPrice stores a project price of a model from the form: USD per million
// prompt and completion tokens, from an effective time (now when empty).
func (h *Handler) addPrice(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	model := strings.TrimSpace(r.PostFormValue("model"))
	if err := checkSettingName("model", model); err != nil {
		h.refuse(w, r, err)
		return
	}
	var costs [2]float64
	for i, field := range []string{"prompt", "completion"} {
		n, err := strconv.ParseFloat(strings.TrimSpace(r.PostFormValue(field)), 64)
		if err != nil || math.IsNaN(n) || n < 0 || n > maxPricePerMillion {
			h.refuse(w, r, weft.Errorf(errBadSetting, "%s: USD per million tokens, from 0 to %d", field, maxPricePerMillion))
			return
		}
		costs[i] = n / 1e6
	}
	price := trace.PriceInput{PromptTokenCost: costs[0], CompletionTokenCost: costs[1], PromptTokenCostUnit: "USD", CompletionTokenCostUnit: "USD"}
	if text := strings.TrimSpace(r.PostFormValue("effective")); text != "" {
		at, ok := parseTime(text)
		if !ok {
			h.refuse(w, r, weft.Errorf(errBadSetting, "effective: a time like 2026-05-01T12:00 (UTC)"))
			return
		}
		price.EffectiveDate = &at
	} else {
		now := h.cfg.Now().UTC().Truncate(time.Second)
		price.EffectiveDate = &now
	}
	_, err := h.cfg.Trace.CostCreate(ctx, &trace.CostCreateReq{ProjectID: projectID, Costs: map[string]trace.PriceInput{model: price}})
	if err == nil {
		err = h.cfg.Authorizer.ProjectWritten(ctx, v.principal, projectID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, projectPath(projectID, "settings")+"#prices", http.StatusSeeOther)
}

// deletePrice removes one project price.
func (h *Handler) deletePrice(w http.ResponseWriter, r *http.Request, v *viewer, projectID string) {
	ctx := r.Context()
	if err := h.cfg.Authorizer.Authorize(ctx, v.principal, projectID, true); err != nil {
		h.refuse(w, r, err)
		return
	}
	id := r.PathValue("priceID")
	if !validID(id) {
		h.refuse(w, r, weft.Errorf(errBadSetting, "no price %q", truncate(id, 40)))
		return
	}
	res, err := h.cfg.Trace.CostPurge(ctx, &trace.CostPurgeReq{ProjectID: projectID, IDs: []string{id}})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if res.NumDeleted == 0 {
		h.renderError(w, r, http.StatusNotFound, "This project has no such price.")
		return
	}
	http.Redirect(w, r, projectPath(projectID, "settings")+"#prices", http.StatusSeeOther)
}

// checkSettingName accepts 1 to 128 characters without control characters.
func checkSettingName(field, s string) error {
	if s == "" || utf8.RuneCountInString(s) > 128 || strings.ContainsFunc(s, unicode.IsControl) {
		return weft.Errorf(errBadSetting, "%s: 1 to 128 characters", field)
	}
	return nil
}
