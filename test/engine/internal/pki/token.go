package pki

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// tokenPrefix starts the engines' secure token format
// (docs/reference/engines.md 4).
const tokenPrefix = "K10"

// Token is a join token: K10<ca-hash>::<user>:<password>, or a bare
// password (the short format), whose user the caller supplies.
type Token struct {
	CAHash   string
	Username string
	Password string
}

// ParseToken reads a token as k3s's clientaccess does: a string without the
// K10 prefix is bare credentials; "user:password" or just a password, in
// which case defaultUser ("node" for agents, "server" for servers) is the
// user. A K10 token's hash part must be empty or 64 characters.
func ParseToken(s, defaultUser string) (Token, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Token{}, errors.New("token must not be empty")
	}
	var t Token
	creds := s
	if strings.HasPrefix(s, tokenPrefix) {
		hash, rest, ok := strings.Cut(s[len(tokenPrefix):], "::")
		if ok {
			if hash != "" && len(hash) != 64 {
				return Token{}, errors.New("invalid token CA hash length")
			}
			t.CAHash, creds = hash, rest
		}
	}
	if user, pass, ok := strings.Cut(creds, ":"); ok {
		t.Username, t.Password = user, pass
	} else {
		t.Username, t.Password = defaultUser, creds
	}
	if t.Password == "" {
		return Token{}, errors.New("token must not be empty")
	}
	return t, nil
}

// String is the secure format, K10<hash>::<user>:<password>.
func (t Token) String() string {
	return tokenPrefix + t.CAHash + "::" + t.Username + ":" + t.Password
}

// CAHash is the token's CA hash of a self-signed CA: SHA256 of the CA file
// as written on disk (server/tls/server-ca.crt).
func CAHash(caPEM []byte) string {
	sum := sha256.Sum256(caPEM)
	return hex.EncodeToString(sum[:])
}
