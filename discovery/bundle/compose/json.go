package compose

import (
	"fmt"

	"github.com/amplidex/amplidex/discovery/bundle"
)

// UnmarshalJSON reads a plan as MarshalJSON writes it (to_mount_plan()'s
// shape), so that a plan sent over the socket reads back to one that
// writes the same bytes.
func (p *MountPlan) UnmarshalJSON(b []byte) error {
	var m bundle.Map
	if err := m.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("decode mount plan: %w", err)
	}
	*p = MountPlan{}
	asMap := func(k string, v any) (*bundle.Map, error) {
		mm, ok := v.(*bundle.Map)
		if !ok {
			return nil, fmt.Errorf("decode mount plan: %s is %s, not a mapping", k, bundle.TypeName(v))
		}
		return mm, nil
	}
	asList := func(k string, v any) ([]*bundle.Map, error) {
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("decode mount plan: %s is %s, not a list", k, bundle.TypeName(v))
		}
		out := make([]*bundle.Map, 0, len(l))
		for _, e := range l {
			mm, err := asMap(k+" entry", e)
			if err != nil {
				return nil, err
			}
			out = append(out, mm)
		}
		return out, nil
	}
	var err error
	for k, v := range m.All() {
		switch k {
		case "session":
			p.Session, err = asMap(k, v)
		case "spawn":
			p.Spawn, err = asMap(k, v)
		case "providers":
			p.Providers, err = asList(k, v)
		case "tools":
			p.Tools, err = asList(k, v)
		case "hooks":
			p.Hooks, err = asList(k, v)
		case "agents":
			var agents *bundle.Map
			if agents, err = asMap(k, v); err == nil {
				for name, a := range agents.All() {
					am, aerr := asMap("agents."+name, a)
					if aerr != nil {
						return aerr
					}
					p.Agents = append(p.Agents, NamedAgent{Name: name, Value: am})
				}
			}
		default:
			return fmt.Errorf("decode mount plan: unknown key %q", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
