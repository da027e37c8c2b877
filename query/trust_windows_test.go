package query_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/internal/querytest"
)

func TestDialRefusesDirectoryOpenToOthers(t *testing.T) {
	_, path := querytest.StartServer(t, querytest.NewHandler())
	dir := filepath.Dir(path)
	if err := querytest.SetDACL(dir, "D:P(A;OICI;FA;;;<user>)(A;;0x1200a9;;;WD)"); err != nil {
		t.Fatal(err)
	}
	c, err := query.Dial(querytest.Context(t), path)
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, query.ErrUnsafeDir) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "S-1-1-0") {
		t.Fatalf("Dial = %v, want ErrUnsafeDir naming %s and Everyone", err, dir)
	}
}
