package prepare

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// Key names one entry of the prepared-bundle cache: the application version
// and the first 16 hex digits of the SHA-256 of the manifest's raw bytes.
type Key struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

// hashLen is how many hex digits of the manifest's SHA-256 a key keeps.
const hashLen = 16

// NewKey returns the key of the manifest bytes src under version, which must
// be a semantic version.
func NewKey(version string, src []byte) (Key, error) {
	if err := CheckVersion(version); err != nil {
		return Key{}, err
	}
	return Key{Version: version, Hash: hashPrefix(src)}, nil
}

// String returns the key as "version/hash".
func (k Key) String() string { return k.Version + "/" + k.Hash }

// CheckVersion returns an error wrapping ErrInvalidVersion unless v is a
// strict semantic version: X.Y.Z with optional pre-release and build parts,
// no "v" prefix.
func CheckVersion(v string) error {
	if v == "" {
		return fmt.Errorf("%w: empty", ErrInvalidVersion)
	}
	if _, err := syntax.ParseVersion(v); err != nil {
		return fmt.Errorf("%w: %q is not X.Y.Z semver", ErrInvalidVersion, v)
	}
	return nil
}

func hashPrefix(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:hashLen/2])
}
