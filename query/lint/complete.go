package lint

import (
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/query"
)

// CollectionNames lists the names of winners that start with prefix, each
// with its description after a tab, as a shell completes them.
func CollectionNames(winners []*discovery.Collection, prefix string) []string {
	var out []string
	for _, c := range winners {
		if strings.HasPrefix(c.Name, prefix) {
			out = append(out, c.Name+"\t"+query.Clean(c.Description))
		}
	}
	return out
}

// Refs lists the "collection:name" references to the resources of kind k
// of winners that start with prefix, each with its description after a
// tab, as a shell completes them.
func Refs(winners []*discovery.Collection, k discovery.Kind, prefix string) []string {
	var out []string
	for _, c := range winners {
		for _, r := range c.Resources {
			if r.Kind != k {
				continue
			}
			if ref := c.Name + ":" + r.Name; strings.HasPrefix(ref, prefix) {
				if f := c.Facts[r.Path]; f != nil && strings.TrimSpace(f.Description) != "" {
					ref += "\t" + query.Clean(strings.Join(strings.Fields(f.Description), " "))
				}
				out = append(out, ref)
			}
		}
	}
	return out
}
