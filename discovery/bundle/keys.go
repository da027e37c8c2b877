package bundle

import (
	"slices"

	"github.com/amplidex/amplidex/discovery/schema"
)

// KeysAt returns the keys the strict schema of a file of kind knows in
// the mapping at path (keys from the top of the front matter or of the
// YAML, schema.ItemStep for a list item): the keys the checks of Parse
// accept there without an unknown-key diagnostic. An agent's top level
// gives the keys beside meta:, not the flat name and description the
// runtime reads only without it; session:, which the runtime leaves
// open, gives the module keys the checks read (orchestrator, context).
// It returns nil where the schema knows no keys (config:, an inline
// agent, a path it does not have). The slice is new.
func KeysAt(kind Kind, path []string) []string {
	if ks := keysAt(kind, path); ks != nil {
		return slices.Clone([]string(ks))
	}
	return nil
}

func keysAt(kind Kind, path []string) keyset {
	const item = schema.ItemStep
	n := len(path)
	is := func(p ...string) bool { return slices.Equal(path, p) }
	// Module entries: the sections of bundles and agents, and session's.
	if kind == KindBundle || kind == KindAgent {
		switch {
		case n == 2 && path[1] == item && (path[0] == "providers" || path[0] == "tools" || path[0] == "hooks"),
			n == 2 && path[0] == "session" && slices.Contains(sessionModules, path[1]):
			return moduleKeys
		case is("session"):
			return sessionModules
		}
	}
	switch kind {
	case KindBundle:
		switch {
		case n == 0:
			return bundleKeys
		case is("bundle"):
			return bundleMetaKeys
		case is("includes", item):
			return keyset{"bundle"}
		case is("spawn"):
			return spawnKeys
		case is("agents"), is("context"):
			return keyset{"include"}
		}
	case KindAgent:
		switch {
		case n == 0:
			return agentKeys
		case is("meta"):
			return agentMetaKeys
		}
	case KindMode:
		switch {
		case n == 0:
			return keyset{"mode"}
		case is("mode"):
			return modeKeys
		case is("mode", "tools"):
			return modeToolKeys
		case is("mode", "contributes"):
			return contributesKeys
		}
	case KindSkill:
		if n == 0 {
			return skillKeys
		}
	case KindRecipe:
		switch {
		case n == 0:
			return recipeKeys
		case is("recursion"):
			return recursionKeys
		case is("stages", item):
			return stageKeys
		case is("stages", item, "approval"):
			return approvalKeys
		case n >= 2 && path[n-1] == item && isStepList(path[:n-1]):
			return stepKeys
		}
	}
	return nil
}

// isStepList reports whether path leads a recipe to a list of steps:
// steps:, a stage's steps:, or the steps: or while_steps: of a step.
func isStepList(path []string) bool {
	n := len(path)
	switch {
	case n == 1:
		return path[0] == "steps"
	case n == 3 && path[0] == "stages" && path[1] == schema.ItemStep:
		return path[2] == "steps"
	case n >= 3 && path[n-2] == schema.ItemStep && (path[n-1] == "steps" || path[n-1] == "while_steps"):
		return isStepList(path[:n-2])
	}
	return false
}
