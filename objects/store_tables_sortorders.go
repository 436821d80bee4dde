package objects

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/uptrace/bun"
)

// sortChunkRanks is the number of ranks one row of a kept order holds.
const sortChunkRanks = 1024

// entryLookups bounds the entries one statement of rowsAt looks up.
const entryLookups = 200

// tableSortChunk is one row of a kept order: the table positions of ranks
// Chunk*sortChunkRanks on, as little-endian uint32s.
type tableSortChunk struct {
	bun.BaseModel `bun:"table:obj_table_sort_orders"`

	ProjectID   string `bun:"project_id,pk"`
	TableDigest string `bun:"table_digest,pk"`
	SortDigest  string `bun:"sort_digest,pk"`
	Chunk       int    `bun:"chunk,pk"`
	Positions   []byte `bun:"positions,notnull"`
}

// sortDigest names a sort: the SHA-256 of its keys and directions.
func sortDigest(paths []sortPath) string {
	type key struct {
		Members []string `json:"m"`
		Desc    bool     `json:"d"`
	}
	keys := make([]key, len(paths))
	for i, p := range paths {
		keys[i] = key{p.members, p.desc}
	}
	text, _ := json.Marshal(keys) // strings and booleans: cannot fail
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

// keptSortRows reads a page of a large table's sorted rows through its kept
// order: the ranks of the page give the positions, and the positions the
// rows. The first query of a sort has the database sort the table and keeps
// the order.
func (s *Store) keptSortRows(ctx context.Context, req *TableQueryReq, paths []sortPath, rowCount int64) ([]joinedRow, error) {
	from := int64(0)
	if req.Offset != nil {
		from = int64(*req.Offset)
	}
	to := rowCount
	if req.Limit != nil {
		to = min(to, from+int64(*req.Limit))
	}
	if from >= to {
		return nil, nil
	}
	digest := sortDigest(paths)
	positions, err := s.keptPositions(ctx, req.ProjectID, req.Digest, digest, from, to)
	if err != nil {
		return nil, err
	}
	if positions == nil {
		all, err := s.keepSortOrder(ctx, req, paths, digest)
		if err != nil {
			return nil, err
		}
		positions = all[min(from, int64(len(all))):min(to, int64(len(all)))]
	}
	return s.rowsAt(ctx, req.ProjectID, req.Digest, positions)
}

// keptPositions reads the positions of ranks from … to−1 of a kept order;
// nil when the order is not kept.
func (s *Store) keptPositions(ctx context.Context, projectID, tableDigest, sortDigest string, from, to int64) ([]int32, error) {
	first, last := from/sortChunkRanks, (to-1)/sortChunkRanks
	var chunks []tableSortChunk
	err := s.db.NewSelect().Model(&chunks).
		Where("project_id = ? AND table_digest = ? AND sort_digest = ? AND chunk BETWEEN ? AND ?", projectID, tableDigest, sortDigest, first, last).
		Order("chunk").Scan(ctx)
	if err != nil || int64(len(chunks)) != last-first+1 {
		return nil, err
	}
	positions := make([]int32, 0, to-from)
	for _, c := range chunks {
		for i := 0; i+4 <= len(c.Positions); i += 4 {
			rank := int64(c.Chunk)*sortChunkRanks + int64(i/4)
			if rank >= from && rank < to {
				positions = append(positions, int32(binary.LittleEndian.Uint32(c.Positions[i:])))
			}
		}
	}
	return positions, nil
}

// keepSortOrder has the database sort every row of the table and keeps the
// order (a concurrent query of the same sort keeps the same one: the second
// write changes nothing). It returns the positions in sorted order.
func (s *Store) keepSortOrder(ctx context.Context, req *TableQueryReq, paths []sortPath, digest string) ([]int32, error) {
	whole := *req
	whole.Filter = nil
	k := s.sortKeysOf(&whole, paths)
	var positions []int32
	if err := s.db.NewRaw(k.With+" SELECT position FROM keys ORDER BY "+k.OrderBy, k.Args...).Scan(ctx, &positions); err != nil {
		return nil, err
	}
	chunks := make([]tableSortChunk, 0, len(positions)/sortChunkRanks+1)
	for start := 0; start < len(positions); start += sortChunkRanks {
		part := positions[start:min(start+sortChunkRanks, len(positions))]
		buf := make([]byte, 4*len(part))
		for j, p := range part {
			binary.LittleEndian.PutUint32(buf[4*j:], uint32(p))
		}
		chunks = append(chunks, tableSortChunk{ProjectID: req.ProjectID, TableDigest: req.Digest, SortDigest: digest, Chunk: start / sortChunkRanks, Positions: buf})
	}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for batch := range slices.Chunk(chunks, 64) {
			if _, err := tx.NewInsert().Model(&batch).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	return positions, err
}

// rowsAt reads the rows at positions of a table, in the order given: the
// entries at the positions, then their rows, each by its primary key. Each
// entry is a lookup of its own (a UNION ALL): a whole primary key leads the
// planner to that index whatever the statistics, where "position IN (…)"
// lets a table written a moment ago, without statistics yet, be read
// through the (table, row digest) index instead, every entry of it.
func (s *Store) rowsAt(ctx context.Context, projectID, tableDigest string, positions []int32) ([]joinedRow, error) {
	at := make(map[int]int, len(positions))
	for i, p := range positions {
		at[int(p)] = i
	}
	out := make([]joinedRow, len(positions))
	const lookup = "SELECT position, row_digest FROM obj_table_entries WHERE project_id = ? AND table_digest = ? AND position = ?"
	for part := range slices.Chunk(positions, entryLookups) {
		args := make([]any, 0, 3*len(part))
		for _, p := range part {
			args = append(args, projectID, tableDigest, p)
		}
		var entries []tableEntry
		err := s.db.NewRaw(strings.TrimSuffix(strings.Repeat(lookup+" UNION ALL ", len(part)), " UNION ALL "), args...).Scan(ctx, &entries)
		if err != nil {
			return nil, err
		}
		digests := make([]string, len(entries))
		for i, e := range entries {
			digests[i] = e.RowDigest
		}
		var rows []tableRowRow
		err = s.db.NewSelect().Model(&rows).Column("digest", "val").
			Where("project_id = ? AND digest IN (?)", projectID, bun.In(slices.Compact(slices.Sorted(slices.Values(digests))))).Scan(ctx)
		if err != nil {
			return nil, err
		}
		vals := make(map[string]string, len(rows))
		for _, r := range rows {
			vals[r.Digest] = r.Val
		}
		for _, e := range entries {
			out[at[e.Position]] = joinedRow{Position: e.Position, RowDigest: e.RowDigest, Val: vals[e.RowDigest]}
		}
	}
	return out, nil
}
