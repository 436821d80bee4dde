package webui

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/weftlabs/weft"
)

// checkRequestText refuses a request whose path, query or form carries text
// no database column can hold: invalid UTF-8 or NUL (which the SQL builder
// would write into the statement instead of binding). One check here keeps
// every page's ids, filters and form fields from reaching a store with them.
func checkRequestText(r *http.Request) error {
	if !cleanText(r.URL.Path) {
		return weft.Errorf(errBadView, "the address holds a NUL or invalid UTF-8")
	}
	if err := r.ParseForm(); err != nil {
		return weft.Errorf(errBadView, "the form or query cannot be read: %v", err)
	}
	for name, values := range r.Form {
		if !cleanText(name) {
			return weft.Errorf(errBadView, "a field name holds a NUL or invalid UTF-8")
		}
		for _, v := range values {
			if !cleanText(v) {
				return weft.Errorf(errBadView, "%s: a NUL or invalid UTF-8", name)
			}
		}
	}
	return nil
}

func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
