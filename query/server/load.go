package server

import (
	"sync"
	"time"

	"github.com/amplidex/amplidex/query"
)

// Defaults of the Server's bounds on connections and requests.
const (
	// DefaultMaxConns is the MaxConns of a Server that sets none.
	DefaultMaxConns = 256
	// DefaultMaxPeerConns is the MaxPeerConns of a Server that sets none.
	DefaultMaxPeerConns = 64
	// DefaultMaxRequests is the MaxRequests of a Server that sets none.
	DefaultMaxRequests = 256
	// DefaultMaxPeerRequests is the MaxPeerRequests of a Server that sets
	// none.
	DefaultMaxPeerRequests = 128
)

// load counts the connections open and the requests being answered, over
// all connections and per peer process, against the server's bounds. A
// peer whose process is not known (pid 0) counts in the totals only.
type load struct {
	maxConns, maxPeerConns       int
	maxRequests, maxPeerRequests int

	mu       sync.Mutex // guards fields below
	conns    int
	requests int
	peers    map[int]*peerLoad // by pid
}

// peerLoad is what one peer process holds.
type peerLoad struct{ conns, requests int }

func newLoad(maxConns, maxPeerConns, maxRequests, maxPeerRequests int) *load {
	or := func(n, def int) int {
		if n <= 0 {
			return def
		}
		return n
	}
	return &load{maxConns: or(maxConns, DefaultMaxConns), maxPeerConns: or(maxPeerConns, DefaultMaxPeerConns),
		maxRequests: or(maxRequests, DefaultMaxRequests), maxPeerRequests: or(maxPeerRequests, DefaultMaxPeerRequests),
		peers: map[int]*peerLoad{}}
}

// peer returns the load of pid, made when missing. l.mu is held.
func (l *load) peer(pid int) *peerLoad {
	p := l.peers[pid]
	if p == nil {
		p = &peerLoad{}
		l.peers[pid] = p
	}
	return p
}

// drop forgets pid once it holds nothing. l.mu is held.
func (l *load) drop(pid int, p *peerLoad) {
	if p.conns == 0 && p.requests == 0 {
		delete(l.peers, pid)
	}
}

// admit counts a connection of pid, or refuses it with query.CodeOverloaded
// when the server or the peer holds as many as it may.
func (l *load) admit(pid int) *query.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns >= l.maxConns {
		return query.Errorf(query.CodeOverloaded, "the server already has %d connections open, its limit; try again later", l.conns)
	}
	if pid != 0 {
		p := l.peer(pid)
		if p.conns >= l.maxPeerConns {
			l.drop(pid, p)
			return query.Errorf(query.CodeOverloaded, "this process (pid %d) already has %d connections open to the server, its limit; close some or try again later", pid, p.conns)
		}
		p.conns++
	}
	l.conns++
	return nil
}

// leave uncounts a connection admit counted.
func (l *load) leave(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns--
	if p := l.peers[pid]; pid != 0 && p != nil {
		p.conns--
		l.drop(pid, p)
	}
}

// take counts a request of pid to be answered, or refuses it with
// query.CodeOverloaded when the server or the peer answers as many as it may.
func (l *load) take(pid int) *query.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.requests >= l.maxRequests {
		return query.Errorf(query.CodeOverloaded, "the server is already answering %d requests, its limit; try again later", l.requests)
	}
	if pid != 0 {
		p := l.peer(pid)
		if p.requests >= l.maxPeerRequests {
			return query.Errorf(query.CodeOverloaded, "this process (pid %d) already has %d requests being answered, its limit; try again later", pid, p.requests)
		}
		p.requests++
	}
	l.requests++
	return nil
}

// give uncounts a request take counted.
func (l *load) give(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests--
	if p := l.peers[pid]; pid != 0 && p != nil {
		p.requests--
		l.drop(pid, p)
	}
}

// usage returns the connections and requests counted now.
func (l *load) usage() (conns, requests int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns, l.requests
}

// refusalEvery is how often, at most, a kind of refusal is logged: a
// flood of them says so once in a while, with how many there were.
const refusalEvery = 10 * time.Second

// refusals rate-limits the log of refusals.
type refusals struct {
	mu   sync.Mutex // guards fields below
	last map[string]time.Time
	n    map[string]int
}

// note counts a refusal of the given kind and reports whether to log it
// now, and how many there were since the last one logged.
func (r *refusals) note(kind string, now time.Time) (log bool, count int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last, r.n = map[string]time.Time{}, map[string]int{}
	}
	r.n[kind]++
	if t, ok := r.last[kind]; ok && now.Sub(t) < refusalEvery {
		return false, 0
	}
	count = r.n[kind]
	r.last[kind], r.n[kind] = now, 0
	return true, count
}
