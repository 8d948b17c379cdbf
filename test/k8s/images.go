package k8s

import (
	"path/filepath"
	"strings"
)

// Registry is the repository prefix kubeadm's images are named with
// (kubeadm's constants.DefaultImageRepository).
const Registry = "registry.k8s.io"

// imageSpec is one image: what goes in it and how it starts.
type imageSpec struct {
	// Name is kubeadm's name for the image: kube-apiserver, etcd, coredns.
	Name string
	// Repository and Tag make the reference kubeadm uses.
	Repository, Tag string
	// Files are binaries from the build: image path to source.
	Files []imageFile
	// Rootfs, if set, is a directory whose whole tree is a layer under
	// the files (kube-proxy's iptables).
	Rootfs string
	// Entrypoint is the image's entrypoint.
	Entrypoint []string
	// User is the image's user ("" for root).
	User string
}

// imageFile is one file an image gets from the build.
type imageFile struct{ Path, Src string }

// Ref is the image's reference: registry.k8s.io/kube-apiserver:v1.35.4.
func (s imageSpec) Ref() string { return s.Repository + ":" + s.Tag }

// binDir is where the control-plane images keep their binary: kubeadm's
// static pods run them by command name, so it is on the image's PATH.
const binDir = "/usr/local/bin"

// imagePath is the PATH of every image.
const imagePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// imageSpecs are the images kubeadm of the release deploys, named and
// tagged as `kubeadm config images list` prints them with the release's
// etcd and CoreDNS tags, from the binaries in bin. proxyRootfs is
// kube-proxy's iptables tree. Where each binary goes and why:
// docs/reference/kubernetes-build.md §4.
func imageSpecs(r Release, bin, proxyRootfs string) []imageSpec {
	kube := func(name string) imageSpec {
		p := binDir + "/" + name
		return imageSpec{
			Name: name, Repository: Registry + "/" + name, Tag: "v" + r.Kubernetes,
			Files:      []imageFile{{p, filepath.Join(bin, name)}},
			Entrypoint: []string{p},
		}
	}
	proxy := kube("kube-proxy")
	proxy.Rootfs = proxyRootfs
	return []imageSpec{
		kube("kube-apiserver"),
		kube("kube-controller-manager"),
		kube("kube-scheduler"),
		proxy,
		{
			Name: "coredns", Repository: Registry + "/coredns/coredns", Tag: r.CoreDNSImageTag,
			Files:      []imageFile{{"/coredns", filepath.Join(bin, "coredns")}},
			Entrypoint: []string{"/coredns"},
		},
		{
			Name: "pause", Repository: Registry + "/pause", Tag: r.Pause,
			Files:      []imageFile{{"/pause", filepath.Join(bin, "pause")}},
			Entrypoint: []string{"/pause"},
			User:       "65535:65535",
		},
		{
			Name: "etcd", Repository: Registry + "/etcd", Tag: r.EtcdImageTag,
			Files: []imageFile{
				{binDir + "/etcd", filepath.Join(bin, "etcd")},
				{binDir + "/etcdctl", filepath.Join(bin, "etcdctl")},
			},
			Entrypoint: []string{binDir + "/etcd"},
		},
	}
}

// ImageRefs are the references of a release's images, in the order
// `kubeadm config images list` prints them.
func (r Release) ImageRefs() []string {
	specs := imageSpecs(r, "", "")
	refs := make([]string, len(specs))
	for i, s := range specs {
		refs[i] = s.Ref()
	}
	return refs
}

// imageFileName is the docker-archive file an image is written to:
// registry.k8s.io/coredns/coredns:v1.13.1 is coredns_v1.13.1.tar.
func imageFileName(s imageSpec) string {
	return s.Name + "_" + strings.ReplaceAll(s.Tag, "/", "-") + ".tar"
}
