package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"net"
	"slices"
	"sort"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
)

// clusterCAs are the two CAs every server of a cluster shares.
type clusterCAs struct {
	server *pki.CA // signs serving certificates; its file is the token's hash
	client *pki.CA // signs client certificates: admin and kubelets
}

// loadCAs reads the CAs from server/tls; ok is false when there are none.
func loadCAs(d dataDir) (*clusterCAs, bool, error) {
	server, err := loadCA(d, "server-ca")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	client, err := loadCA(d, "client-ca")
	if err != nil {
		return nil, false, err
	}
	return &clusterCAs{server: server, client: client}, true, nil
}

func loadCA(d dataDir, name string) (*pki.CA, error) {
	c, err := hostfs.ReadFile(d.tls(name + ".crt"))
	if err != nil {
		return nil, err
	}
	k, err := hostfs.ReadFile(d.tls(name + ".key"))
	if err != nil {
		return nil, err
	}
	return pki.ParseCA(c, k)
}

// newCAs makes a new cluster's CAs, named as k3s names them.
func newCAs(program string) (*clusterCAs, error) {
	server, err := pki.NewCA(program + "-server-ca")
	if err != nil {
		return nil, err
	}
	client, err := pki.NewCA(program + "-client-ca")
	if err != nil {
		return nil, err
	}
	return &clusterCAs{server: server, client: client}, nil
}

// save writes the CAs to server/tls (keys 0600).
func (c *clusterCAs) save(d dataDir) error {
	for _, f := range []struct {
		name string
		data []byte
		mode fs.FileMode
	}{
		{"server-ca.crt", c.server.CertPEM, 0o644}, {"server-ca.key", c.server.KeyPEM, 0o600},
		{"client-ca.crt", c.client.CertPEM, 0o644}, {"client-ca.key", c.client.KeyPEM, 0o600},
	} {
		if err := hostfs.WriteFile(d.tls(f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// servingCert is the apiserver's (and supervisor's) certificate: it covers
// 127.0.0.1, localhost, the in-cluster kubernetes names, the node's name
// and addresses and every tls-san. It is reissued when that list changes,
// so adding a load balancer address to tls-san and restarting covers it.
func servingCert(d dataDir, ca *pki.CA, dnsNames []string, ips []net.IP) (tls.Certificate, error) {
	certFile, keyFile := d.tls("serving-kube-apiserver.crt"), d.tls("serving-kube-apiserver.key")
	if c, err := hostfs.ReadFile(certFile); err == nil {
		if k, err := hostfs.ReadFile(keyFile); err == nil {
			if cur, err := pki.ParseCert(c); err == nil && sameSANs(cur, dnsNames, ips) && signedBy(cur, ca) {
				return tls.X509KeyPair(c, k)
			}
		}
	}
	c, k, err := ca.Issue(pki.Leaf{CommonName: "kube-apiserver", Server: true, DNSNames: dnsNames, IPs: ips})
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := hostfs.WriteFile(certFile, c, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	if err := hostfs.WriteFile(keyFile, k, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(c, k)
}

func sameSANs(c *x509.Certificate, dnsNames []string, ips []net.IP) bool {
	have := slices.Clone(c.DNSNames)
	want := slices.Clone(dnsNames)
	sort.Strings(have)
	sort.Strings(want)
	if !slices.Equal(have, want) || len(c.IPAddresses) != len(ips) {
		return false
	}
	for i := range ips {
		if !c.IPAddresses[i].Equal(ips[i]) {
			return false
		}
	}
	return true
}

func signedBy(c *x509.Certificate, ca *pki.CA) bool {
	return c.CheckSignatureFrom(ca.Cert) == nil
}

// adminCert is server/tls/client-admin.crt, the admin kubeconfig's
// identity (system:admin in system:masters).
func adminCert(d dataDir, ca *pki.CA) (certPEM, keyPEM []byte, err error) {
	certFile, keyFile := d.tls("client-admin.crt"), d.tls("client-admin.key")
	if c, err := hostfs.ReadFile(certFile); err == nil {
		if k, err := hostfs.ReadFile(keyFile); err == nil {
			if cur, err := pki.ParseCert(c); err == nil && signedBy(cur, ca) {
				return c, k, nil
			}
		}
	}
	c, k, err := ca.Issue(pki.Leaf{CommonName: "system:admin", Organization: []string{"system:masters"}})
	if err != nil {
		return nil, nil, err
	}
	if err := hostfs.WriteFile(certFile, c, 0o644); err != nil {
		return nil, nil, err
	}
	return c, k, hostfs.WriteFile(keyFile, k, 0o600)
}

// leafOnly drops the CA from a bundle, for a kubeconfig's client cert.
func leafOnly(bundle []byte) []byte {
	b, _ := pem.Decode(bundle)
	if b == nil {
		return bundle
	}
	return pem.EncodeToMemory(b)
}
