package daemon_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/query"
)

// TestSubscriptionOfForgottenProjectEnds: when the project a subscription
// follows is forgotten, the subscription ends with a not-found error that
// says so, over the socket and in process, rather than going on silently
// with nothing to follow.
func TestSubscriptionOfForgottenProjectEnds(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	e.collection(filepath.Join(e.projectRoot(), "tools"), "tools", "1.0.0")
	d := e.start()
	c := e.client()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := query.Subscribe(ctx, c, query.MethodSubscribe, query.SubscribeParams{Common: query.Common{Project: e.project}})
	if err != nil {
		t.Fatal(err)
	}
	followed := make(chan error, 1)
	updated := make(chan struct{}, 1)
	go func() {
		followed <- d.Follow(ctx, e.project, nil, func(query.Update) error {
			select {
			case updated <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	// A change seen by both makes sure both follow before the forget.
	e.write(filepath.Join(e.projectRoot(), "tools", "agents", "odd.md"), "---\nmeta:\n  name: odd\n  description: Odd\nodd_key: 1\n---\n")
	if ds := e.diagnostics(c); !hasCode(ds, "schema/unknown-key", "odd.md") {
		t.Fatalf("the odd agent is not reported: %v", ds)
	}
	select {
	case <-updated:
	case <-ctx.Done():
		t.Fatal("Follow told nothing of the odd agent")
	}
	n, ok := <-ch
	if !ok || n.End {
		t.Fatalf("the subscription told nothing of the odd agent: %+v", n)
	}
	if _, _, err := query.Call(ctx, c, query.MethodForget, query.ForgetParams{Dir: e.project}); err != nil {
		t.Fatal(err)
	}

	var end *query.Notification
	for n := range ch {
		if n.End {
			end = &n
			break
		}
	}
	var qe *query.Error
	switch {
	case end == nil:
		t.Error("the subscription's channel closed without an end notification")
	case end.Error == nil:
		t.Error("the subscription ended without saying why")
	case end.Error.Code != query.CodeNotFound || !strings.Contains(end.Error.Message, "forgotten"):
		t.Errorf("the subscription ended with %v", end.Error)
	}
	select {
	case err := <-followed:
		if !errors.As(err, &qe) || qe.Code != query.CodeNotFound || !strings.Contains(qe.Message, "forgotten") {
			t.Errorf("Follow returned %v", err)
		}
	case <-ctx.Done():
		t.Error("Follow still follows the forgotten project")
	}
}

// TestClientRootsReadable: the key a client's own roots are registered
// under (project, home and bundled roots joined by NUL bytes) reaches
// neither a message nor the log: a subscription over them, ended by a
// forget, says which project and which roots in words, and so does the
// log of the forget.
func TestClientRootsReadable(t *testing.T) {
	e := newEnv(t)
	e.collection(filepath.Join(e.projectRoot(), "tools"), "tools", "1.0.0")
	other := filepath.Join(e.dir, "other-bundled")
	e.collection(filepath.Join(other, "extra"), "extra", "1.0.0")
	var log logBuffer
	e.startLogged(&log, true)
	c := e.client()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	roots := &query.Roots{Home: e.home, Bundled: []string{other}}
	ch, err := query.Subscribe(ctx, c, query.MethodSubscribe, query.SubscribeParams{Common: query.Common{Project: e.project, Roots: roots}})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := <-ch; !ok || n.End {
		t.Fatalf("no first update: %+v", n)
	}
	if _, _, err := query.Call(ctx, c, query.MethodForget, query.ForgetParams{Dir: e.project}); err != nil {
		t.Fatal(err)
	}
	var end *query.Notification
	for n := range ch {
		if n.End {
			end = &n
			break
		}
	}
	if end == nil || end.Error == nil {
		t.Fatalf("the subscription ended without an error: %+v", end)
	}
	msg := end.Error.Message
	if strings.ContainsRune(msg, 0) || !strings.Contains(msg, e.project) || !strings.Contains(msg, other) {
		t.Errorf("the end of the subscription says %q: want the project and the client's bundled root, and no NUL", msg)
	}
	text := log.String()
	if !strings.Contains(text, "forgetting a project") {
		t.Fatalf("the forget is not logged:\n%s", text)
	}
	if strings.ContainsRune(text, 0) || strings.Contains(text, `\x00`) {
		t.Errorf("the log shows a NUL-separated key:\n%s", text)
	}
}
