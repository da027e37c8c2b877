package sockos_test

import (
	"strings"
	"testing"

	"github.com/amplidex/amplidex/query/internal/sockos"
)

const testUser = "S-1-5-21-1004336348-1177238915-682003330-1001"

// Access masks and SIDs as Windows writes them.
const (
	fullControl                                             = 0x1f01ff
	modify                                                  = 0x1301bf
	readExecute                                             = 0x1200a9
	objectInherit, containerInherit, inheritOnly, inherited = 0x1, 0x2, 0x8, 0x10

	sidSystem, sidAdmins, sidUsers, sidAuthenticated, sidEveryone, sidCreatorOwner = "S-1-5-18", "S-1-5-32-544", "S-1-5-32-545", "S-1-5-11", "S-1-1-0", "S-1-3-0"
)

// parseSDDL reads the owner, whether the DACL is protected, and the entries
// of a security descriptor in SDDL, as far as privateDirSDDL writes it:
// allow entries, OI/CI flags, FA rights and SIDs or the SY alias.
func parseSDDL(t *testing.T, sddl string) (owner string, protected bool, aces []sockos.ACE) {
	t.Helper()
	rest, ok := strings.CutPrefix(sddl, "O:")
	owner, dacl, ok2 := strings.Cut(rest, "D:")
	if !ok || !ok2 {
		t.Fatalf("%q: want O:<owner>D:<dacl>", sddl)
	}
	dacl, protected = strings.CutPrefix(dacl, "P")
	for dacl != "" {
		entry, after, ok := strings.Cut(strings.TrimPrefix(dacl, "("), ")")
		if !ok || !strings.HasPrefix(dacl, "(") {
			t.Fatalf("%q: bad entries %q", sddl, dacl)
		}
		dacl = after
		f := strings.Split(entry, ";")
		if len(f) != 6 || f[0] != "A" || f[2] != "FA" || f[3] != "" || f[4] != "" {
			t.Fatalf("%q: entry %q is not an allow of full control", sddl, entry)
		}
		var flags uint8
		for i := 0; i+2 <= len(f[1]); i += 2 {
			switch f[1][i : i+2] {
			case "OI":
				flags |= objectInherit
			case "CI":
				flags |= containerInherit
			default:
				t.Fatalf("%q: unknown flag in %q", sddl, entry)
			}
		}
		sid := f[5]
		if sid == "SY" {
			sid = sidSystem
		}
		aces = append(aces, sockos.NewACE(0, flags, fullControl, sid, ""))
	}
	return owner, protected, aces
}

// TestPrivateDirSDDL checks the security descriptor a socket directory is
// made with on Windows: the user's, protected, inherited by what it holds,
// and judged private.
func TestPrivateDirSDDL(t *testing.T) {
	owner, protected, aces := parseSDDL(t, sockos.PrivateDirSDDL(testUser))
	if owner != testUser {
		t.Errorf("owner %s, want the user %s", owner, testUser)
	}
	if !protected {
		t.Error("the DACL is not protected: it would inherit the parent's entries")
	}
	var sids []string
	for _, a := range aces {
		sids = append(sids, a.SID)
		if a.Flags != objectInherit|containerInherit {
			t.Errorf("entry for %s has flags %#x, want OI|CI", a.SID, a.Flags)
		}
	}
	if got := strings.Join(sids, " "); got != testUser+" "+sidSystem {
		t.Errorf("entries for %s, want the user and SYSTEM alone", got)
	}
	if others, _, tighten := sockos.JudgeDACL(aces, protected, testUser); others != "" || tighten {
		t.Errorf("judged to let in %q (tighten %v), want private", others, tighten)
	}
}

func TestJudgeDACL(t *testing.T) {
	a := sockos.NewACE
	for _, tc := range []struct {
		name        string
		aces        []sockos.ACE
		protected   bool
		others      string
		othersWrite bool
		tighten     bool
	}{
		{
			name:      "private",
			aces:      []sockos.ACE{a(0, 3, fullControl, testUser, ""), a(0, 3, fullControl, sidSystem, "")},
			protected: true,
		},
		{
			// %LOCALAPPDATA%\amplidex made by os.MkdirAll: the profile's entries.
			name: "inherited from the profile",
			aces: []sockos.ACE{a(0, 3|inherited, fullControl, sidSystem, ""), a(0, 3|inherited, fullControl, sidAdmins, ""),
				a(0, 3|inherited, fullControl, testUser, "")},
			tighten: true,
		},
		{
			// A folder made under D:\ by os.MkdirAll.
			name: "inherited from a drive's root",
			aces: []sockos.ACE{a(0, 3|inherited, fullControl, sidAdmins, ""), a(0, 3|inherited, fullControl, sidSystem, ""),
				a(0, 3|inherited, readExecute, sidUsers, `BUILTIN\Users`),
				a(0, inherited, modify, sidAuthenticated, `NT AUTHORITY\Authenticated Users`),
				a(0, 3|inheritOnly|inherited, 0xe0010000, sidAuthenticated, "")},
			others:      `BUILTIN\Users (S-1-5-32-545): 0x1200a9, NT AUTHORITY\Authenticated Users (S-1-5-11): 0x1301bf`,
			othersWrite: true,
			tighten:     true,
		},
		{
			name:      "read only for others",
			aces:      []sockos.ACE{a(0, 3, fullControl, testUser, ""), a(0, 0, readExecute, sidUsers, "")},
			protected: true,
			others:    sidUsers + ": 0x1200a9",
			tighten:   true,
		},
		{
			name:        "only the right to delete it",
			aces:        []sockos.ACE{a(0, 0, 0x10000, sidAuthenticated, "")},
			protected:   true,
			others:      sidAuthenticated + ": 0x10000",
			othersWrite: true,
			tighten:     true,
		},
		{
			name:      "denials and entries for children only",
			aces:      []sockos.ACE{a(1, 0, fullControl, sidEveryone, ""), a(0, 3|inheritOnly, fullControl, sidCreatorOwner, ""), a(0, 0, 0, sidEveryone, "")},
			protected: true,
		},
		{
			name:        "a conditional entry",
			aces:        []sockos.ACE{a(9, 0, readExecute, "", "")},
			protected:   true,
			others:      "an entry of type 9: 0x1200a9",
			othersWrite: true,
			tighten:     true,
		},
		{
			name:        "no DACL",
			aces:        sockos.NullDACL(),
			protected:   true,
			others:      "Everyone (S-1-1-0): 0x10000000",
			othersWrite: true,
			tighten:     true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			others, write, tighten := sockos.JudgeDACL(tc.aces, tc.protected, testUser)
			if others != tc.others || write != tc.othersWrite || tighten != tc.tighten {
				t.Errorf("got others %q, write %v, tighten %v; want %q, %v, %v", others, write, tighten, tc.others, tc.othersWrite, tc.tighten)
			}
		})
	}
}
