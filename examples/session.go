package examples

import (
	"context"

	"github.com/dosim/dosim/object"
)

// Session counts a visitor's hits, in storage and in a cache kept in a
// field: the classic mistake of assuming in-memory state survives (rule
// L5). Objects are evicted when idle (and reset by deploys, rule L3): the
// next event builds a new instance whose fields start empty. HitsCached
// trusts the field, so after an eviction it answers 0 while storage holds
// the true count; Hits, the fix, reloads from storage when its cache is
// cold.
type Session struct {
	st     *object.State
	hits   int  // the cache
	loaded bool // whether hits was loaded from storage
}

// NewSession is the Session constructor for runtime.Namespace.
func NewSession(st *object.State) object.Object { return &Session{st: st} }

// Methods lists Session's methods.
func (s *Session) Methods() object.Methods {
	return object.Methods{
		"Hit":        object.Func(s.Hit),
		"HitsCached": object.Retryable(s.HitsCached),
		"Hits":       object.Retryable(s.Hits),
	}
}

// load fills the cache from storage if it is cold.
func (s *Session) load(ctx context.Context) error {
	if s.loaded {
		return nil
	}
	if _, err := s.st.Storage().Get(ctx, "hits", &s.hits); err != nil {
		return err
	}
	s.loaded = true
	return nil
}

// Hit counts one hit and returns the new count.
func (s *Session) Hit(ctx context.Context) (int, error) {
	if err := s.load(ctx); err != nil {
		return 0, err
	}
	if err := s.st.Storage().Put(ctx, "hits", s.hits+1); err != nil {
		return 0, err
	}
	s.hits++
	return s.hits, nil
}

// HitsCached returns the cached count without loading it: the bug. It is
// right only while the instance that counted the hits lives.
func (s *Session) HitsCached(ctx context.Context) (int, error) { return s.hits, nil }

// Hits returns the count, loading it from storage if the cache is cold
// (a new instance after an eviction or a reset): the fix.
func (s *Session) Hits(ctx context.Context) (int, error) {
	if err := s.load(ctx); err != nil {
		return 0, err
	}
	return s.hits, nil
}
