package kube

import (
	"crypto/rand"
	"math/big"
)

// RandomSuffix is the five random characters generateName appends, from
// the same alphabet apimachinery uses (no vowels, no look-alikes).
func RandomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b)
}
