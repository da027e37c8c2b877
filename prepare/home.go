package prepare

import (
	"errors"
	"fmt"
	"path/filepath"
)

// HomeEnv is the environment variable that names the cache home.
const HomeEnv = "AMPLIFIER_AGENT_HOME"

// DefaultHomeDir is the cache home's name inside the user's home directory.
const DefaultHomeDir = ".amplifier-agent"

// ResolveHome returns the cache home, absolute and cleaned: $AMPLIFIER_AGENT_HOME
// when set, else configured when not empty, else ~/.amplifier-agent. getenv
// reads the environment (HOME and AMPLIFIER_AGENT_HOME).
func ResolveHome(getenv func(string) string, configured string) (string, error) {
	dir := getenv(HomeEnv)
	if dir == "" {
		dir = configured
	}
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("resolve cache home: neither " + HomeEnv + " nor HOME is set")
		}
		dir = filepath.Join(home, DefaultHomeDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolve cache home %s: %w", dir, err)
	}
	return abs, nil
}

// layout names the directories and files under a cache home.
type layout struct{ home string }

func (l layout) cache() string    { return filepath.Join(l.home, "cache") }
func (l layout) prepared() string { return filepath.Join(l.cache(), "prepared") }
func (l layout) modules() string  { return filepath.Join(l.cache(), "modules") }
func (l layout) locks() string    { return filepath.Join(l.cache(), "locks") }

func (l layout) entry(k Key) string {
	return filepath.Join(l.prepared(), k.Version, k.Hash)
}

// entryLock is the lock a cold build of k holds. It lives outside prepared/
// so that Clear never deletes a lock someone holds.
func (l layout) entryLock(k Key) string {
	return filepath.Join(l.locks(), "prepared", k.Version, k.Hash+".lock")
}

// writeLock is held shared while an entry is written and exclusively by
// Clear.
func (l layout) writeLock() string { return filepath.Join(l.locks(), "prepared.lock") }

// repoLock is held while a repository is cloned into the module cache.
func (l layout) repoLock(repo string) string {
	return filepath.Join(l.locks(), "modules", repo+".lock")
}
