package query_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
	"github.com/amplidex/amplidex/query/server"
)

// TestBuildKey: two builds share a Key exactly when Same says they are one.
func TestBuildKey(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	release := query.Build{Version: "v1.2.3", Revision: "abc", Time: "2026-05-01T10:00:00Z", GoVersion: "go1.26.8", Platform: "linux/amd64", Built: at}
	variants := map[string]query.Build{"release": release}
	with := func(name string, f func(*query.Build)) {
		b := release
		f(&b)
		variants[name] = b
	}
	with("installed later", func(b *query.Build) { b.Built = at.Add(time.Hour) })
	with("another version", func(b *query.Build) { b.Version = "v1.2.4" })
	with("another revision", func(b *query.Build) { b.Revision = "abd" })
	with("another toolchain", func(b *query.Build) { b.GoVersion = "go1.26.9" })
	with("another platform", func(b *query.Build) { b.Platform = "linux/arm64" })
	with("modified", func(b *query.Build) { b.Modified = true })
	with("modified, later", func(b *query.Build) { b.Modified, b.Built = true, at.Add(time.Second) })
	with("modified, same instant elsewhere", func(b *query.Build) { b.Modified, b.Built = true, at.In(time.FixedZone("x", 3600)) })
	with("work tree", func(b *query.Build) { b.Version, b.Revision = "(devel)", "" })
	with("work tree, later", func(b *query.Build) { b.Version, b.Revision, b.Built = "(devel)", "", at.Add(time.Nanosecond) })
	with("work tree, unknown time", func(b *query.Build) { b.Version, b.Revision, b.Built = "(devel)", "", time.Time{} })
	with("no revision, released", func(b *query.Build) { b.Revision = "" })
	with("no revision, released, later", func(b *query.Build) { b.Revision, b.Built = "", at.Add(time.Hour) })
	with("fields run together", func(b *query.Build) { b.Version, b.Revision = "v1.2.3abc", "" })
	with("dirty", func(b *query.Build) { b.Version = "v1.2.3+dirty" })
	with("dirty, later", func(b *query.Build) { b.Version, b.Built = "v1.2.3+dirty", at.Add(time.Hour) })
	for na, a := range variants {
		for nb, b := range variants {
			if same, keys := a.Same(b), a.Key() == b.Key(); same != keys {
				t.Errorf("%s and %s: Same %v, keys equal %v (%q, %q)", na, nb, same, keys, a.Key(), b.Key())
			}
		}
	}
}

// TestBuildNewer: of two builds, at most one is newer (so that two builds
// on one machine never replace each other's daemon in turn), and one build
// is never newer than itself; a release's higher version, a later
// commit, a work tree over a release, a work tree written later.
func TestBuildNewer(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	release := query.Build{Version: "v1.2.3", Revision: "abc", Time: "2026-05-01T10:00:00Z", GoVersion: "go1.26.8", Platform: "linux/amd64", Built: at}
	b := func(f func(*query.Build)) query.Build {
		x := release
		f(&x)
		return x
	}
	builds := map[string]query.Build{
		"release":                  release,
		"release, installed later": b(func(x *query.Build) { x.Built = at.Add(time.Hour) }),
		"next patch":               b(func(x *query.Build) { x.Version, x.Revision = "v1.2.4", "abd" }),
		"release candidate":        b(func(x *query.Build) { x.Version = "v1.2.4-rc.1" }),
		"pseudo-version after": b(func(x *query.Build) {
			x.Version, x.Time = "v1.2.4-0.20260601000000-abcdefabcdef", "2026-06-01T00:00:00Z"
		}),
		"same version, later": b(func(x *query.Build) { x.Revision, x.Time = "abe", "2026-05-02T10:00:00Z" }),
		"another toolchain":   b(func(x *query.Build) { x.GoVersion = "go1.26.9" }),
		"work tree":           b(func(x *query.Build) { x.Version, x.Revision, x.Time = "(devel)", "", "" }),
		"work tree, later":    b(func(x *query.Build) { x.Version, x.Revision, x.Time, x.Built = "(devel)", "", "", at.Add(time.Minute) }),
		"dirty":               b(func(x *query.Build) { x.Version = "v1.2.4-0.20260601000000-abcdefabcdef+dirty" }),
		"dirty, later commit": b(func(x *query.Build) {
			x.Version, x.Time = "v1.2.4-0.20260601000000-abcdefabcdef+dirty", "2026-06-01T00:00:00Z"
		}),
		"not semantic": b(func(x *query.Build) { x.Version = "vX" }),
	}
	for na, x := range builds {
		if x.Newer(x) {
			t.Errorf("%s is newer than itself", na)
		}
		for nb, y := range builds {
			if x.Newer(y) && y.Newer(x) {
				t.Errorf("%s and %s are each newer than the other", na, nb)
			}
		}
	}
	for _, tc := range []struct{ newer, older string }{
		{"next patch", "release"},
		{"release candidate", "release"},
		{"next patch", "release candidate"},
		{"pseudo-version after", "release"},
		{"next patch", "pseudo-version after"},
		{"same version, later", "release"},
		{"work tree", "next patch"},
		{"work tree, later", "work tree"},
		{"dirty", "next patch"},
		{"dirty, later commit", "dirty"},
	} {
		if !builds[tc.newer].Newer(builds[tc.older]) {
			t.Errorf("%s is not newer than %s", tc.newer, tc.older)
		}
	}
	// Builds with nothing to order them by: neither replaces the other.
	for _, pair := range [][2]string{{"release", "release, installed later"}, {"release", "another toolchain"}, {"release", "not semantic"}} {
		if x, y := builds[pair[0]], builds[pair[1]]; x.Newer(y) || y.Newer(x) {
			t.Errorf("%s and %s: one is newer", pair[0], pair[1])
		}
	}
}

// otherBuild is a build no test binary is of.
var otherBuild = query.Build{Version: "v0.0.1", Revision: "feed", GoVersion: "go1.0", Platform: "plan9/386"}

// TestServerRefusesOtherBuild: a request naming another build than the
// server's is refused with other-build and not run; one naming the
// server's build, or none, is answered.
func TestServerRefusesOtherBuild(t *testing.T) {
	h := querytest.NewHandler()
	srv, path := querytest.StartServer(t, h, func(s *server.Server) { s.Build = otherBuild })
	rc := querytest.DialRaw(t, path)
	key, _ := json.Marshal(query.ReadBuild().Key())
	rc.Send(`{"id":1,"method":"echo","params":{"v":1},"build":` + string(key) + `}`)
	m := rc.Recv()
	if m.Error == nil || m.Error.Code != query.CodeOtherBuild || string(m.ID) != "1" {
		t.Fatalf("answer %s, want an other-build error for id 1", m.Raw)
	}
	if !strings.Contains(m.Error.Message, otherBuild.String()) {
		t.Errorf("message %q does not name the server's build %s", m.Error.Message, otherBuild)
	}
	if n := h.Tick.Load(); n != 0 {
		t.Errorf("the handler ran %d times for a refused request", n)
	}

	mine, _ := json.Marshal(srv.Build.Key())
	for _, line := range []string{
		`{"id":2,"method":"echo","params":{"v":2},"build":` + string(mine) + `}`,
		`{"id":3,"method":"echo","params":{"v":3}}`,
		`{"id":4,"method":"echo","params":{"v":4},"build":""}`,
	} {
		rc.Send(line)
		if m := rc.Recv(); m.Error != nil || !strings.Contains(string(m.Result), `"v"`) {
			t.Errorf("%s: answer %s, want the echo", line, m.Raw)
		}
	}
}

// TestClientRequireBuild: a client that requires its build gets
// other-build from a server of another, as an *Error, and its answer once
// it requires none.
func TestClientRequireBuild(t *testing.T) {
	h := querytest.NewHandler()
	_, other := querytest.StartServer(t, h, func(s *server.Server) { s.Build = otherBuild })
	_, same := querytest.StartServer(t, querytest.NewHandler())
	ctx := querytest.Context(t)

	c := querytest.DialClient(t, other)
	c.RequireBuild(query.ReadBuild())
	var out map[string]int
	_, err := c.Call(ctx, "echo", map[string]int{"v": 1}, &out)
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Code != query.CodeOtherBuild {
		t.Fatalf("Call to a server of another build: %v, want an other-build *Error", err)
	}
	if h.Tick.Load() != 0 {
		t.Error("the handler ran")
	}
	// Subscriptions name the build too.
	if _, err := c.Subscribe(ctx, "watch", map[string]int{"count": 1}); !errors.As(err, &qe) || qe.Code != query.CodeOtherBuild {
		t.Errorf("Subscribe to a server of another build: %v, want an other-build *Error", err)
	}
	c.RequireBuild(query.Build{})
	if _, err := c.Call(ctx, "echo", map[string]int{"v": 2}, &out); err != nil || out["v"] != 2 {
		t.Errorf("Call without a build: %v, %v", out, err)
	}

	c = querytest.DialClient(t, same)
	c.RequireBuild(query.ReadBuild())
	if _, err := c.Call(ctx, "echo", map[string]int{"v": 3}, &out); err != nil || out["v"] != 3 {
		t.Errorf("Call to a server of the same build: %v, %v", out, err)
	}
}

// TestRequireBuildAgainstOlderServer: a server that knows no build in a
// request (one older than Request.Build) refuses it as invalid, naming the
// key; the client reports that answer, not a lost connection.
func TestRequireBuildAgainstOlderServer(t *testing.T) {
	path := querytest.SocketPath(t)
	ln := listenOlderServer(t, path)
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), querytest.Timeout)
	defer cancel()
	c, err := query.Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.RequireBuild(query.ReadBuild())
	_, err = c.Call(ctx, "echo", nil, nil)
	var qe *query.Error
	if !errors.As(err, &qe) || qe.Code != query.CodeInvalidRequest || !strings.Contains(qe.Message, `unknown field "build"`) {
		t.Fatalf("Call: %v, want an invalid-request *Error about the build", err)
	}
	c.RequireBuild(query.Build{})
	if _, err := c.Call(ctx, "echo", nil, nil); err != nil {
		t.Errorf("Call without a build: %v", err)
	}
}

// listenOlderServer serves path as a server older than Request.Build did:
// it decodes each request strictly, refusing any member but id, method and
// params as an invalid request, and answers the others with null.
func listenOlderServer(t *testing.T, path string) net.Listener {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				sc := bufio.NewScanner(nc)
				for n := 1; sc.Scan(); n++ {
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
						Params json.RawMessage `json:"params"`
					}
					dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
					dec.DisallowUnknownFields()
					var line []byte
					if err := dec.Decode(&req); err != nil {
						id, _ := json.Marshal(req.ID)
						if req.ID == nil {
							id = []byte("null")
						}
						msg, _ := json.Marshal(fmt.Sprintf("line %d: decode request: %s", n, strings.TrimPrefix(err.Error(), "json: ")))
						line = []byte(`{"id":` + string(id) + `,"error":{"code":"invalid-request","message":` + string(msg) + `}}`)
					} else {
						line = []byte(`{"id":` + string(req.ID) + `,"result":null}`)
					}
					if _, err := nc.Write(append(line, '\n')); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln
}
