package weft

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Identity sentinels.
var (
	ErrBadCredentials = DefineError(ErrUnauthenticated, "AuthenticationError", "missing or invalid API key")
	ErrNotMember      = DefineError(ErrForbidden, "Forbidden", "the caller is not a member of this project's entity")
	ErrUserExists     = DefineError(ErrConflict, "Conflict", "user already exists")
	ErrEntityExists   = DefineError(ErrConflict, "Conflict", "an entity of that name already exists")
	ErrUnknownUser    = DefineError(ErrNotFound, "NotFoundError", "user not found")
	ErrUnknownKey     = DefineError(ErrNotFound, "NotFoundError", "API key not found")
	ErrUnknownEntity  = DefineError(ErrNotFound, "NotFoundError", "entity not found")
	ErrBadName        = DefineError(ErrInvalid, "InvalidRequest", "names are 1 to 128 characters without '/', ':' or control characters")
)

// DefaultIdentityCacheTTL is how long [Identity] remembers an authenticated
// key when IdentityConfig.CacheTTL is zero.
const DefaultIdentityCacheTTL = 5 * time.Second

// IdentityConfig configures [NewIdentity].
type IdentityConfig struct {
	// DB holds the users, entities, memberships, keys and projects. Required.
	DB *DB
	// CacheTTL is how long an authenticated key and its memberships are remembered
	// before the database is asked again; a revoked key stops working on other
	// servers within this time (at once on the server that revoked it).
	// Defaults to [DefaultIdentityCacheTTL]; negative disables the cache.
	CacheTTL time.Duration
	// Now is the clock that stamps rows and expires cached keys. Defaults to
	// time.Now; times are stored in UTC.
	Now func() time.Time
}

func (cfg *IdentityConfig) setDefaults() error {
	if cfg.DB == nil {
		return errors.New("weft: IdentityConfig.DB is required")
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = DefaultIdentityCacheTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}

// Identity stores users, the entities (teams) they belong to, their API keys, and
// the projects created under entities. Keys are stored as SHA-256 hashes and
// compared in constant time. Every user gets a personal entity named after it.
type Identity struct {
	db       *DB
	cacheTTL time.Duration
	now      func() time.Time

	mu       sync.Mutex
	keys     map[string]cachedPrincipal // by key hash
	used     map[string]time.Time       // key id → when its use was last written
	projects sync.Map                   // "entity/project" → struct{}: known to exist
	entities sync.Map                   // entity name → struct{}: known to exist
}

type cachedPrincipal struct {
	principal Principal
	expires   time.Time
}

// NewIdentity returns an Identity over cfg.DB (migrated with [Migrate]).
func NewIdentity(cfg IdentityConfig) (*Identity, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	return &Identity{db: cfg.DB, cacheTTL: cfg.CacheTTL, now: cfg.Now, keys: map[string]cachedPrincipal{}, used: map[string]time.Time{}}, nil
}

// User is a stored user.
type User struct {
	bun.BaseModel `bun:"table:users"`

	ID        string    `bun:"id,pk"`
	Username  string    `bun:"username"`
	Admin     bool      `bun:"admin"`
	CreatedAt time.Time `bun:"created_at"`
}

type entityRow struct {
	bun.BaseModel `bun:"table:entities"`

	Name      string    `bun:"name,pk"`
	CreatedAt time.Time `bun:"created_at"`
}

type membershipRow struct {
	bun.BaseModel `bun:"table:memberships"`

	Entity    string    `bun:"entity,pk"`
	UserID    string    `bun:"user_id,pk"`
	Role      string    `bun:"role"`
	CreatedAt time.Time `bun:"created_at"`
}

type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID         string     `bun:"id,pk"`
	UserID     string     `bun:"user_id"`
	Name       string     `bun:"name"`
	SecretHash string     `bun:"secret_hash"`
	CreatedAt  time.Time  `bun:"created_at"`
	RevokedAt  *time.Time `bun:"revoked_at"`
	LastUsedAt *time.Time `bun:"last_used_at"`
}

type projectRow struct {
	bun.BaseModel `bun:"table:projects"`

	Entity    string    `bun:"entity,pk"`
	Name      string    `bun:"name,pk"`
	CreatedBy string    `bun:"created_by"`
	CreatedAt time.Time `bun:"created_at"`
}

// CreateUser stores a new user with its personal entity (named after the user) and
// makes the user that entity's owner. A taken username is ErrUserExists; a name
// that is already an entity (a team) is ErrEntityExists: the new user would
// otherwise become the owner of that team and its projects.
func (id *Identity) CreateUser(ctx context.Context, username string, admin bool) (User, error) {
	if !validName(username) {
		return User{}, Errorf(ErrBadName, "username %q: %s", truncate(username, 40), ErrBadName.Error())
	}
	now := id.now().UTC()
	user := User{ID: uuid.Must(uuid.NewV7()).String(), Username: username, Admin: admin, CreatedAt: now}
	err := id.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		exists, err := tx.NewSelect().Model((*User)(nil)).Where("username = ?", username).Exists(ctx)
		if err != nil {
			return err
		}
		if exists {
			return Errorf(ErrUserExists, "user %q already exists", username)
		}
		if _, err := tx.NewInsert().Model(&user).Exec(ctx); err != nil {
			return err
		}
		// The insert is the check: of two concurrent creations of one name
		// (a team and a user), only one inserts the entity.
		res, err := tx.NewInsert().Model(&entityRow{Name: username, CreatedAt: now}).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return Errorf(ErrEntityExists, "%q is already an entity; a user's name is also its personal entity, so choose another name", username)
		}
		_, err = tx.NewInsert().Model(&membershipRow{Entity: username, UserID: user.ID, Role: "owner", CreatedAt: now}).Exec(ctx)
		return err
	})
	if err != nil {
		return User{}, err
	}
	return user, nil
}

// CreateEntity stores an entity (a team). Creating one that exists is a no-op.
func (id *Identity) CreateEntity(ctx context.Context, name string) error {
	if !validName(name) {
		return Errorf(ErrBadName, "entity %q: %s", truncate(name, 40), ErrBadName.Error())
	}
	return createEntity(ctx, id.db, name, id.now().UTC())
}

func createEntity(ctx context.Context, db bun.IDB, name string, now time.Time) error {
	_, err := db.NewInsert().Model(&entityRow{Name: name, CreatedAt: now}).On("CONFLICT DO NOTHING").Exec(ctx)
	return err
}

// AddMember makes the user a member of entity with role ("owner" or "member"),
// creating the entity if needed. Adding an existing member updates its role.
func (id *Identity) AddMember(ctx context.Context, entity, username, role string) error {
	user, err := id.user(ctx, username)
	if err != nil {
		return err
	}
	if err := id.CreateEntity(ctx, entity); err != nil {
		return err
	}
	_, err = id.db.NewInsert().Model(&membershipRow{Entity: entity, UserID: user.ID, Role: role, CreatedAt: id.now().UTC()}).
		On("CONFLICT (entity, user_id) DO UPDATE").Set("role = EXCLUDED.role").Exec(ctx)
	id.forget()
	return err
}

func (id *Identity) user(ctx context.Context, username string) (User, error) {
	var user User
	err := id.db.NewSelect().Model(&user).Where("username = ?", username).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, Errorf(ErrUnknownUser, "user %q not found", truncate(username, 40))
	}
	return user, err
}

// keyPrefix starts every API key weft issues.
const keyPrefix = "wf_"

// CreateAPIKey issues a new API key for the user and returns it. The key is shown
// only here: the database keeps its hash.
func (id *Identity) CreateAPIKey(ctx context.Context, username, name string) (string, error) {
	user, err := id.user(ctx, username)
	if err != nil {
		return "", err
	}
	keyID := randomHex(8)
	key := keyPrefix + keyID + "_" + randomHex(20)
	row := apiKeyRow{ID: keyID, UserID: user.ID, Name: name, SecretHash: hashKey(key), CreatedAt: id.now().UTC()}
	if _, err := id.db.NewInsert().Model(&row).Exec(ctx); err != nil {
		return "", err
	}
	return key, nil
}

// RevokeAPIKey disables a key, named by its id (the hex part after "wf_"),
// by "wf_<id>", or by the whole key as CreateAPIKey returned it. Revoking a
// revoked key is a no-op; an unknown id is ErrUnknownKey.
func (id *Identity) RevokeAPIKey(ctx context.Context, key string) error {
	keyID := APIKeyID(key)
	res, err := id.db.NewUpdate().Model((*apiKeyRow)(nil)).Set("revoked_at = ?", id.now().UTC()).
		Where("id = ?", keyID).Where("revoked_at IS NULL").Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		exists, err := id.db.NewSelect().Model((*apiKeyRow)(nil)).Where("id = ?", keyID).Exists(ctx)
		if err != nil {
			return err
		}
		if !exists {
			return Errorf(ErrUnknownKey, "API key %q not found", truncate(keyID, 40))
		}
	}
	id.forget()
	return nil
}

// Authenticate returns the principal that owns key. username is the user name a
// Basic credential carried: "" or "api" accept any owner, anything else must be
// the owner's name. A wrong, unknown or revoked key is ErrBadCredentials.
func (id *Identity) Authenticate(ctx context.Context, username, key string) (Principal, error) {
	hash := hashKey(key)
	p, ok := id.cached(hash)
	if !ok {
		var err error
		if p, err = id.lookup(ctx, key, hash); err != nil {
			return Principal{}, err
		}
		id.remember(hash, p)
	}
	if username != "" && username != "api" && username != p.Username {
		return Principal{}, ErrBadCredentials
	}
	id.noteKeyUse(ctx, p.KeyID)
	return p, nil
}

// KeyUseInterval is how often, at most, the use of one API key is written
// (APIKey.LastUsedAt) by one process: a key in use costs one small write a
// minute, not one per request.
const KeyUseInterval = time.Minute

// noteKeyUse records that the key with id keyID was used now, unless this
// process wrote its use less than KeyUseInterval ago. The record is a
// convenience for people: a failed write is tried again on the next use and
// fails nothing.
func (id *Identity) noteKeyUse(ctx context.Context, keyID string) {
	if keyID == "" {
		return
	}
	now := id.now().UTC()
	id.mu.Lock()
	if last, ok := id.used[keyID]; ok && now.Sub(last) < KeyUseInterval {
		id.mu.Unlock()
		return
	}
	if len(id.used) > 10_000 { // bound the map; a key forgotten is written once more
		clear(id.used)
	}
	id.used[keyID] = now
	id.mu.Unlock()
	_, err := id.db.NewUpdate().Model((*apiKeyRow)(nil)).Set("last_used_at = ?", now).Where("id = ?", keyID).
		Where("last_used_at IS NULL OR last_used_at < ?", now.Add(-KeyUseInterval)).Exec(context.WithoutCancel(ctx))
	if err != nil {
		id.mu.Lock()
		delete(id.used, keyID)
		id.mu.Unlock()
	}
}

// keyRow reads the API key with id keyID, revoked or not; ErrBadCredentials
// when there is none.
func (id *Identity) keyRow(ctx context.Context, keyID string) (apiKeyRow, error) {
	var row apiKeyRow
	err := id.db.NewSelect().Model(&row).Where("id = ?", keyID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return row, ErrBadCredentials
	}
	return row, err
}

func (id *Identity) lookup(ctx context.Context, key, hash string) (Principal, error) {
	keyID, ok := parseKeyID(key)
	if !ok {
		return Principal{}, ErrBadCredentials
	}
	row, err := id.keyRow(ctx, keyID)
	if err != nil {
		return Principal{}, err
	}
	if subtle.ConstantTimeCompare([]byte(row.SecretHash), []byte(hash)) != 1 || row.RevokedAt != nil {
		return Principal{}, ErrBadCredentials
	}
	return id.principalOf(ctx, row)
}

// principalOf returns the principal of a live key's owner with its current
// memberships.
func (id *Identity) principalOf(ctx context.Context, row apiKeyRow) (Principal, error) {
	keyID := row.ID
	var user User
	if err := id.db.NewSelect().Model(&user).Where("id = ?", row.UserID).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Principal{}, ErrBadCredentials
		}
		return Principal{}, err
	}
	var entities []string
	if err := id.db.NewSelect().Model((*membershipRow)(nil)).Column("entity").
		Where("user_id = ?", user.ID).OrderExpr("entity").Scan(ctx, &entities); err != nil {
		return Principal{}, err
	}
	return Principal{
		UserID: user.ID, Username: user.Username, Entities: entities,
		DefaultEntity: user.Username, Admin: user.Admin, KeyID: keyID,
	}, nil
}

// Authorize checks that p may touch projectID ("<entity>/<project>"): a
// member of the entity may, and an admin may touch every project of every
// entity that exists. A malformed id is ErrBadProjectID; an entity that does
// not exist is ErrUnknownEntity (HTTP 404) for everyone, admins included, so
// a mistyped entity is never created by a write; a project of another entity
// is ErrNotMember (HTTP 403: entity names are not secret, and a clear answer
// helps more than a vague 404). Authorize only checks: a write records its
// project with [Identity.ProjectWritten] once it succeeded, so a write that
// is refused creates nothing.
func (id *Identity) Authorize(ctx context.Context, p Principal, projectID string, write bool) error {
	entity, _, err := ParseProjectID(projectID)
	if err != nil {
		return err
	}
	if slices.Contains(p.Entities, entity) {
		return nil // a membership row names an entity that exists
	}
	exists, err := id.entityExists(ctx, entity)
	if err != nil {
		return err
	}
	if !exists {
		return Errorf(ErrUnknownEntity, "entity %q not found", truncate(entity, 40))
	}
	if !p.Admin {
		return Errorf(ErrNotMember, "%s is not a member of entity %q", p.Username, entity)
	}
	return nil
}

// entityExists reports whether entity is stored; entities are never
// deleted, so one seen once is remembered.
func (id *Identity) entityExists(ctx context.Context, entity string) (bool, error) {
	if _, known := id.entities.Load(entity); known {
		return true, nil
	}
	exists, err := id.db.NewSelect().Model((*entityRow)(nil)).Where("name = ?", entity).Exists(ctx)
	if exists {
		id.entities.Store(entity, struct{}{})
	}
	return exists, err
}

// ProjectWritten records projectID, which p was authorized to write and
// wrote, in the project list the first time it is written to.
func (id *Identity) ProjectWritten(ctx context.Context, p Principal, projectID string) error {
	if _, known := id.projects.Load(projectID); known {
		return nil
	}
	entity, project, err := ParseProjectID(projectID)
	if err != nil {
		return err
	}
	_, err = id.db.NewInsert().Model(&projectRow{Entity: entity, Name: project, CreatedBy: p.UserID, CreatedAt: id.now().UTC()}).
		On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return err
	}
	id.projects.Store(projectID, struct{}{})
	return nil
}

// Bootstrap creates the first user when the database has none: an admin user
// named username whose personal entity has the same name, and one API key for it,
// which it returns. With any user present it does nothing and returns "".
func (id *Identity) Bootstrap(ctx context.Context, username string) (string, error) {
	n, err := id.db.NewSelect().Model((*User)(nil)).Count(ctx)
	if err != nil {
		return "", err
	}
	if n > 0 {
		return "", nil
	}
	if _, err := id.CreateUser(ctx, username, true); err != nil {
		if errors.Is(err, ErrUserExists) { // another server bootstrapped first
			return "", nil
		}
		return "", err
	}
	return id.CreateAPIKey(ctx, username, "bootstrap")
}

func (id *Identity) cached(hash string) (Principal, bool) {
	if id.cacheTTL < 0 {
		return Principal{}, false
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	entry, ok := id.keys[hash]
	if !ok || id.now().After(entry.expires) {
		return Principal{}, false
	}
	return entry.principal, true
}

func (id *Identity) remember(hash string, p Principal) {
	if id.cacheTTL < 0 {
		return
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if len(id.keys) > 10_000 { // bound the cache; it refills from the database
		clear(id.keys)
	}
	id.keys[hash] = cachedPrincipal{principal: p, expires: id.now().Add(id.cacheTTL)}
}

// forget drops every cached principal, after a change to keys or memberships.
func (id *Identity) forget() {
	id.mu.Lock()
	defer id.mu.Unlock()
	clear(id.keys)
}

// APIKeyID is the id of a key named as RevokeAPIKey takes it: the id
// itself, "wf_<id>" or the whole key. It is no secret: the id is what
// commands and logs may print.
func APIKeyID(key string) string {
	rest, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return key
	}
	keyID, _, _ := strings.Cut(rest, "_")
	return keyID
}

func parseKeyID(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return "", false
	}
	keyID, _, ok := strings.Cut(rest, "_")
	return keyID, ok && keyID != ""
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("weft: no randomness: %v", err)) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
