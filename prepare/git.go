package prepare

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// fetched is where a module source landed.
type fetched struct {
	// dir is the clone (git) or the directory used in place.
	dir    string
	commit string
}

// gitWaitDelay bounds how long a cancelled git may hold its output pipes.
const gitWaitDelay = 5 * time.Second

// repoEnv lists the variables that point git at a repository; a prepare
// run from inside a git hook must not inherit them.
var repoEnv = [...]string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX"}

// A transfer over HTTP slower than lowSpeedLimit bytes a second for
// lowSpeedTime seconds is given up (git's http.lowSpeedLimit and
// http.lowSpeedTime, which git does not set): a remote that accepts and
// never answers, or stops halfway, would otherwise hold git, and a helper
// git started, for ever. Any limit above zero ends a stall; 1000 bytes a
// second also ends a remote that trickles, yet is below the slowest link
// a clone can be expected to finish on. A minute, not less, because a
// server computing the pack of a large repository may send only its
// keep-alives (a few bytes every 5 seconds) for tens of seconds.
const (
	lowSpeedLimit = "1000"
	lowSpeedTime  = "60"
)

// gitEnvironment returns env without repoEnv, with prompts for
// credentials turned off, and with GIT_HTTP_LOW_SPEED_LIMIT and
// GIT_HTTP_LOW_SPEED_TIME set to lowSpeedLimit and lowSpeedTime unless env
// gives them a value.
func gitEnvironment(env []string) []string {
	out := make([]string, 0, len(env)+3)
	speed := map[string]string{"GIT_HTTP_LOW_SPEED_LIMIT": lowSpeedLimit, "GIT_HTTP_LOW_SPEED_TIME": lowSpeedTime}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		keep := name != "GIT_TERMINAL_PROMPT"
		for _, r := range repoEnv {
			keep = keep && name != r
		}
		if _, ok := speed[name]; ok {
			// Empty counts as unset (git would read it as 0, no bound);
			// "0" is how a user turns the bound off.
			keep = false
			if value != "" {
				speed[name] = value
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_TERMINAL_PROMPT=0",
		"GIT_HTTP_LOW_SPEED_LIMIT="+speed["GIT_HTTP_LOW_SPEED_LIMIT"],
		"GIT_HTTP_LOW_SPEED_TIME="+speed["GIT_HTTP_LOW_SPEED_TIME"])
}

// Bounds on what is kept of a child's output, which a remote server feeds.
const (
	// maxGitOutput bounds git's standard output (ls-remote, rev-parse);
	// past it the fetch fails.
	maxGitOutput = 4 << 20
	// maxOutputTail is how much of the end of standard error (and of the
	// install command's output) is kept for the error message.
	maxOutputTail = 64 << 10
	// maxTailLine bounds each line an error message quotes.
	maxTailLine = 512
)

// runGit runs git with args in dir and returns its standard output. The
// error carries the last lines git wrote to standard error. git is killed
// when ctx ends and, where the system allows, when this process dies (see
// runChild). Its output is kept within maxGitOutput and maxOutputTail.
func (c *Cache) runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.git, args...)
	cmd.Dir = dir
	cmd.Env = c.gitEnv
	stdout := &limitWriter{max: maxGitOutput}
	stderr := &tailWriter{max: maxOutputTail}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = gitWaitDelay
	err := runChild(cmd)
	switch {
	case ctx.Err() != nil && err != nil:
		return nil, ctx.Err()
	case stdout.over:
		return nil, fmt.Errorf("git %s: more than %d bytes of output", gitSubcommand(args), maxGitOutput)
	case err != nil:
		return nil, fmt.Errorf("git %s: %w%s", gitSubcommand(args), err, tail(stderr.bytes()))
	}
	return stdout.buf, nil
}

// gitSubcommand returns the subcommand in git's arguments, past the
// options before it ("-c name=value").
func gitSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c":
			i++
		case !strings.HasPrefix(args[i], "-"):
			return args[i]
		}
	}
	return "git"
}

// limitWriter keeps what is written to it up to max bytes. A write past
// that fails, which closes the child's pipe rather than filling memory.
type limitWriter struct {
	buf  []byte
	max  int
	over bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > w.max {
		w.over = true
		return 0, errors.New("too much output")
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	buf []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > w.max {
		p = p[len(p)-w.max:]
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		w.buf = w.buf[:copy(w.buf, w.buf[len(w.buf)-w.max:])]
	}
	return n, nil
}

func (w *tailWriter) bytes() []byte {
	if len(w.buf) > w.max {
		return w.buf[len(w.buf)-w.max:]
	}
	return w.buf
}

// tail returns the last few non-empty lines of out, each cut to
// maxTailLine bytes, for an error message.
func tail(out []byte) string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > maxTailLine {
				l = strings.ToValidUTF8(l[:maxTailLine], "") + "…"
			}
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	if len(lines) == 0 {
		return ""
	}
	return ": " + strings.Join(lines, "; ")
}

// repoID names a repository's directory in the module cache: its last path
// element, made safe, and a hash of the whole URL.
func repoID(url string) string {
	base := strings.TrimSuffix(path.Base(strings.TrimRight(url, "/")), ".git")
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if name == "" {
		name = "repo"
	}
	if len(name) > 64 {
		name = name[:64]
	}
	sum := sha256.Sum256([]byte(url))
	return name + "-" + hex.EncodeToString(sum[:6])
}

// fetchGit makes sure a shallow clone of src's repository at src's ref is
// in the module cache and returns it. A ref that names a branch or a tag is
// resolved with git ls-remote first, so a commit already cloned is reused.
func (c *Cache) fetchGit(ctx context.Context, src Source) (fetched, error) {
	repo := repoID(src.URL)
	repoDir := filepath.Join(c.layout.modules(), "git", repo)
	commit, err := c.remoteCommit(ctx, src)
	if err != nil {
		return fetched{}, err
	}
	if dir := filepath.Join(repoDir, commit); isDir(dir) {
		return fetched{dir: dir, commit: commit}, nil
	}
	lk, err := lockFile(ctx, c.layout.repoLock(repo), false)
	if err != nil {
		return fetched{}, err
	}
	defer lk.unlock()
	if dir := filepath.Join(repoDir, commit); isDir(dir) {
		return fetched{dir: dir, commit: commit}, nil
	}
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		return fetched{}, fmt.Errorf("create %s: %w", repoDir, err)
	}
	c.removeStaleClones(repoDir)
	tmp, err := os.MkdirTemp(repoDir, fmt.Sprintf("%s%d-*", clonePrefix, os.Getpid()))
	if err != nil {
		return fetched{}, fmt.Errorf("create clone directory in %s: %w", repoDir, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	if err := c.clone(ctx, src, commit, tmp); err != nil {
		return fetched{}, err
	}
	out, err := c.runGit(ctx, tmp, "rev-parse", "HEAD")
	if err != nil {
		return fetched{}, err
	}
	head := strings.TrimSpace(string(out))
	if !isCommitID(head) {
		return fetched{}, fmt.Errorf("git rev-parse HEAD in %s: unexpected output %q", tmp, head)
	}
	// The branch may have moved since ls-remote: file the clone under the
	// commit it holds.
	final := filepath.Join(repoDir, head)
	if !isDir(final) {
		if err := os.Rename(tmp, final); err != nil {
			return fetched{}, fmt.Errorf("move clone into %s: %w", final, err)
		}
		if err := syncDir(repoDir); err != nil {
			return fetched{}, err
		}
	}
	return fetched{dir: final, commit: head}, nil
}

// clonePrefix begins the name of a clone in progress:
// .clone-<pid>-<random>, pid being the process that clones.
const clonePrefix = ".clone-"

// removeStaleClones removes the clones that builds killed mid-clone left
// in repoDir. The caller holds the repository's lock, which every clone
// into repoDir holds for its whole length, so no clone honouring the lock
// is in progress; still, a clone is removed only when the process its name
// records is gone (or its name records none, as older builds named them).
// That keeps a live clone when the lock cannot be trusted: its file was
// removed while held, or the file system does not lock. A reused pid keeps
// a dead clone until that process ends too.
func (c *Cache) removeStaleClones(repoDir string) {
	names, _ := filepath.Glob(filepath.Join(repoDir, clonePrefix+"*"))
	for _, n := range names {
		if pid, ok := cloneOwner(filepath.Base(n)); ok && processAlive(pid) {
			continue
		}
		if err := os.RemoveAll(n); err != nil {
			c.log.Warn("cannot remove a stale clone", "path", n, "err", err)
			continue
		}
		c.log.Info("removed a stale clone", "path", n)
	}
}

// cloneOwner returns the process id a clone directory's name records, and
// false when the name is not .clone-<pid>-<random>.
func cloneOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, clonePrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	if !ok || err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// clone fetches src at commit into the empty directory dir, shallow.
func (c *Cache) clone(ctx context.Context, src Source, commit, dir string) error {
	if isCommitID(src.Ref) {
		// A commit cannot be named to clone --branch: fetch it alone.
		if _, err := c.runGit(ctx, dir, "init", "-q"); err != nil {
			return err
		}
		if _, err := c.runGit(ctx, dir, "fetch", "-q", "--depth", "1", src.URL, commit); err != nil {
			return err
		}
		_, err := c.runGit(ctx, dir, "-c", "advice.detachedHead=false", "checkout", "-q", "--detach", "FETCH_HEAD")
		return err
	}
	args := []string{"-c", "advice.detachedHead=false", "clone", "-q", "--depth", "1"}
	if src.Ref != "" {
		args = append(args, "--branch", src.Ref)
	}
	args = append(args, "--", src.URL, dir)
	_, err := c.runGit(ctx, "", args...)
	return err
}

// remoteCommit returns the commit src's ref names: the ref itself when it
// is a full commit id, else what git ls-remote reports for the branch or tag
// (or HEAD when there is no ref).
func (c *Cache) remoteCommit(ctx context.Context, src Source) (string, error) {
	if isCommitID(src.Ref) {
		return strings.ToLower(src.Ref), nil
	}
	pattern := src.Ref
	if pattern == "" {
		pattern = "HEAD"
	}
	out, err := c.runGit(ctx, "", "ls-remote", src.URL, pattern)
	if err != nil {
		return "", err
	}
	refs := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), "\t")
		if ok && isCommitID(id) {
			refs[name] = id
		}
	}
	for _, name := range []string{
		pattern,
		"refs/heads/" + pattern,
		"refs/tags/" + pattern + "^{}",
		"refs/tags/" + pattern,
	} {
		if id, ok := refs[name]; ok {
			return id, nil
		}
	}
	if src.Ref == "" {
		return "", fmt.Errorf("git ls-remote %s: the repository has no HEAD", src.URL)
	}
	return "", fmt.Errorf("git ls-remote %s: no branch or tag %q (a commit must be given in full)", src.URL, src.Ref)
}

// isCommitID reports whether s is a full SHA-1 or SHA-256 object id.
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// moduleDir returns the directory of subdirectory sub inside root, which
// must exist and stay inside root once symbolic links are followed.
func moduleDir(root, sub string) (string, error) {
	dir := filepath.Join(root, filepath.FromSlash(sub))
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no subdirectory %s in %s", sub, root)
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", dir, err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", root, err)
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("subdirectory %s leaves %s", sub, root)
	}
	if !isDir(real) {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return dir, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// install runs the configured install command for one module directory:
// "{path}" and "{module}" in its words are replaced, and the directory is
// appended when no word holds "{path}".
func (c *Cache) install(ctx context.Context, module, dir string) error {
	args := make([]string, 0, len(c.installCmd)+1)
	hasPath := false
	for _, w := range c.installCmd {
		hasPath = hasPath || strings.Contains(w, "{path}")
		w = strings.ReplaceAll(w, "{path}", dir)
		args = append(args, strings.ReplaceAll(w, "{module}", module))
	}
	if !hasPath {
		args = append(args, dir)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	out := &tailWriter{max: maxOutputTail}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = gitWaitDelay
	if err := runChild(cmd); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("install command %s: %w%s", args[0], err, tail(out.bytes()))
	}
	return nil
}
