// Package ratelimit hands out tokens from a bucket that refills at a
// steady rate, so that callers can bound how often they act.
package ratelimit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrClosed is returned by Wait once the limiter is closed.
var ErrClosed = errors.New("ratelimit: limiter closed")

const (
	// DefaultBurst is the bucket size when none is given.
	DefaultBurst = 10
	minInterval  = time.Millisecond
)

// Limiter is a token bucket. Its zero value is not usable; call New.
type Limiter struct {
	mu       sync.Mutex
	tokens   float64
	burst    float64
	interval time.Duration
	last     time.Time
	closed   bool
}

// New returns a limiter that allows one event every interval, with bursts
// of up to burst events.
func New(interval time.Duration, burst int) *Limiter {
	if interval < minInterval {
		interval = minInterval
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return &Limiter{tokens: float64(burst), burst: float64(burst), interval: interval, last: time.Now()}
}

// refill adds the tokens earned since the last call; l.mu must be held.
func (l *Limiter) refill(now time.Time) {
	earned := float64(now.Sub(l.last)) / float64(l.interval)
	l.tokens = min(l.burst, l.tokens+earned)
	l.last = now
}

// Allow reports whether an event may happen now, and takes a token if so.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refill(time.Now())
	if l.closed || l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// Wait blocks until a token is free, the context ends or the limiter
// closes.
func (l *Limiter) Wait(ctx context.Context) error {
	for {
		if l.Allow() {
			return nil
		}
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return ErrClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(l.interval):
		}
	}
}

// Close wakes every waiter with ErrClosed.
func (l *Limiter) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}
