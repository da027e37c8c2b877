package daemon_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amplidex/amplidex/cmd/amplidex/internal/daemon"
	"github.com/amplidex/amplidex/query"
)

// TestStatusShowsRegistration: while a project's first question waits
// for its registration, status names the project, the phase and the
// files of its roots read so far; once the question is answered, it
// names none.
func TestStatusShowsRegistration(t *testing.T) {
	deadline(t, 3*time.Minute)
	e := newEnv(t)
	e.collection(filepath.Join(e.userRoot(), "alone"), "alone", "1.0.0")
	for _, name := range []string{"one", "two", "three"} {
		e.collection(filepath.Join(e.projectRoot(), name), name, "1.0.0")
	}
	held := filepath.Join(e.projectRoot(), "two", "agents", "helper.md")
	hold, free := holdRead(held)
	defer free()
	e.startWith(func(o *daemon.Options) { o.ReadFile = hold })
	c := e.client()
	var st query.Status
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Registering) != 0 {
		t.Fatalf("registering before any question: %+v", st.Registering)
	}

	answered := make(chan error, 1)
	go func() {
		// A resolve is answered before the read ends (from the
		// collections' names); a listing of the collections waits for it.
		var r []query.CollectionInfo
		answered <- e.call(c, "collections", nil, &r)
	}()
	var reg query.RegistrationProgress
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st = query.Status{}
		if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Registering) == 1 && st.Registering[0].Phase == "reading collections" && st.Registering[0].Files > 0 {
			reg = st.Registering[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the project being read: %+v", st.Registering)
		}
	}
	if reg.Dir != e.project || reg.Files > 12 || reg.Elapsed == "" {
		t.Errorf("registration %+v, want %s with at most the 12 files of its 3 collections", reg, e.project)
	}
	var text strings.Builder
	if err := query.MethodStatus.Print(&text, &st, query.PrintOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "registering  "+e.project+"  reading collections: ") {
		t.Errorf("status text does not show the registration:\n%s", text.String())
	}
	free()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the question was not answered once the read went on")
	}
	st = query.Status{}
	if err := callWithin(t, c, 10*time.Second, "status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Registering) != 0 {
		t.Errorf("registering after the answer: %+v", st.Registering)
	}
}
