package prepare

import "github.com/amplidex/amplidex/discovery"

// LoadManifest validates src as the manifest at path, for fuzzing.
func LoadManifest(path string, src []byte) ([]discovery.Diagnostic, error) {
	m, err := loadManifest(path, src, discovery.SchemaOptions{})
	if err != nil {
		return nil, err
	}
	return m.warnings, nil
}
