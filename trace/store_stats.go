package trace

import (
	"context"
	"strings"

	"github.com/weftlabs/weft"
)

// StorageSize implements [Service].
func (s *Store) StorageSize(ctx context.Context, projectID string) (int64, error) {
	if _, _, err := weft.ParseProjectID(projectID); err != nil {
		return 0, err
	}
	var sum []string
	for _, column := range []string{"attributes", "inputs", "output", "summary", "exception"} {
		sum = append(sum, s.dialect.ByteLength("c."+column))
	}
	var total int64
	q := s.db.NewSelect().TableExpr("calls AS c").ColumnExpr("coalesce(sum(" + strings.Join(sum, " + ") + "), 0)")
	err := visible(q, projectID).Scan(ctx, &total)
	return total, err
}
