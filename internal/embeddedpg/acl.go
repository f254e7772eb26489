package embeddedpg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// POSIX ACL entry tags and the xattr layout (linux/posix_acl_xattr.h).
const (
	aclXattr     = "system.posix_acl_access"
	aclVersion   = 2
	aclUserObj   = 0x01
	aclUser      = 0x02
	aclGroupObj  = 0x04
	aclMask      = 0x10
	aclOther     = 0x20
	aclUndefined = 0xffffffff
	aclExecute   = 0x1
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// reachable reports whether the user in cred can search (traverse) dir by
// its mode bits, or by an ACL entry for that user.
func reachable(dir string, cred *syscall.Credential) (bool, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	mode := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if mode&0o001 != 0 || (ok && st.Uid == cred.Uid && mode&0o100 != 0) || (ok && st.Gid == cred.Gid && mode&0o010 != 0) {
		return true, nil
	}
	entries, _ := readACL(dir)
	var user, mask bool
	hasMask := false
	for _, e := range entries {
		switch {
		case e.tag == aclUser && e.id == cred.Uid:
			user = e.perm&aclExecute != 0
		case e.tag == aclMask:
			hasMask, mask = true, e.perm&aclExecute != 0
		}
	}
	return user && (mask || !hasMask), nil
}

// grantSearch makes every parent of dir that the user in cred cannot
// search searchable by that user alone, with a POSIX ACL entry (as
// `setfacl -m u:USER:x` would), so a data directory under root's home works
// without opening the home to anyone else.
func grantSearch(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		ok, err := reachable(d, cred)
		if err != nil {
			return err
		}
		if !ok {
			if err := addUserSearchACL(d, cred.Uid); err != nil {
				return fmt.Errorf("letting uid %d enter %s: %w", cred.Uid, d, err)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func readACL(path string) ([]aclEntry, error) {
	buf := make([]byte, 1024)
	n, err := syscall.Getxattr(path, aclXattr, buf)
	if err != nil {
		return nil, err
	}
	buf = buf[:n]
	if len(buf) < 4 || binary.LittleEndian.Uint32(buf) != aclVersion || (len(buf)-4)%8 != 0 {
		return nil, errors.New("unexpected ACL format")
	}
	var es []aclEntry
	for b := buf[4:]; len(b) >= 8; b = b[8:] {
		es = append(es, aclEntry{binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]), binary.LittleEndian.Uint32(b[4:])})
	}
	return es, nil
}

// addUserSearchACL adds (or extends) an ACL entry giving uid execute
// permission on path, keeping everyone else's permissions as they are.
func addUserSearchACL(path string, uid uint32) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	mode := uint16(fi.Mode().Perm())
	entries, err := readACL(path)
	if err != nil || len(entries) == 0 {
		entries = []aclEntry{
			{aclUserObj, mode >> 6 & 7, aclUndefined},
			{aclGroupObj, mode >> 3 & 7, aclUndefined},
			{aclOther, mode & 7, aclUndefined},
		}
	}
	var out []aclEntry
	added, hasMask := false, false
	var groupObj uint16
	for _, e := range entries {
		switch e.tag {
		case aclUser:
			if e.id == uid {
				e.perm |= aclExecute
				added = true
			}
		case aclGroupObj:
			groupObj = e.perm
		case aclMask:
			hasMask = true
			e.perm |= aclExecute
		}
		out = append(out, e)
	}
	if !added {
		out = append(out, aclEntry{aclUser, aclExecute, uid})
	}
	if !hasMask {
		out = append(out, aclEntry{aclMask, groupObj | aclExecute, aclUndefined})
	}
	sortACL(out)
	buf := make([]byte, 4, 4+8*len(out))
	binary.LittleEndian.PutUint32(buf, aclVersion)
	for _, e := range out {
		buf = binary.LittleEndian.AppendUint16(buf, e.tag)
		buf = binary.LittleEndian.AppendUint16(buf, e.perm)
		buf = binary.LittleEndian.AppendUint32(buf, e.id)
	}
	return syscall.Setxattr(path, aclXattr, buf, 0)
}

// sortACL orders entries by tag, then id, as the kernel requires.
func sortACL(es []aclEntry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && (es[j].tag < es[j-1].tag || es[j].tag == es[j-1].tag && es[j].id < es[j-1].id); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
