package podnet

import (
	"strconv"
	"strings"
)

// Name is the name of every object the manifest creates, all in
// Namespace.
const (
	Name      = "podnet"
	Namespace = "kube-system"
)

// manifest is podnet's objects. The DaemonSet runs on every node whatever
// its taints (a node is NotReady, and tainted so, until a CNI
// configuration exists, which is what podnet writes), in the host's
// network namespace, with NET_ADMIN for the routes, as root for
// /etc/cni/net.d. The image is imported on the hosts, never pulled.
const manifest = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: podnet
  namespace: kube-system
  labels:
    app.kubernetes.io/name: podnet
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: podnet
  labels:
    app.kubernetes.io/name: podnet
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: podnet
  labels:
    app.kubernetes.io/name: podnet
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: podnet
subjects:
- kind: ServiceAccount
  name: podnet
  namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: podnet
  namespace: kube-system
  labels:
    app.kubernetes.io/name: podnet
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: podnet
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  template:
    metadata:
      labels:
        app.kubernetes.io/name: podnet
    spec:
      serviceAccountName: podnet
      hostNetwork: true
      dnsPolicy: ClusterFirstWithHostNet
      priorityClassName: system-node-critical
      terminationGracePeriodSeconds: 10
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
      - operator: Exists
      containers:
      - name: podnet
        image: IMAGE
        imagePullPolicy: IfNotPresent
        env:
        - name: NODE_NAME
          valueFrom:
            fieldRef:
              fieldPath: spec.nodeName
        securityContext:
          runAsUser: 0
          privileged: false
          capabilities:
            add: [NET_ADMIN]
        resources:
          requests:
            cpu: 10m
            memory: 20Mi
        volumeMounts:
        - name: cni-conf
          mountPath: /etc/cni/net.d
      volumes:
      - name: cni-conf
        hostPath:
          path: /etc/cni/net.d
          type: DirectoryOrCreate
`

// Manifest is podnet's objects as one multi-document YAML stream, for
// `kubectl apply -f`: its ServiceAccount, a ClusterRole to get, list and
// watch Nodes with its ClusterRoleBinding, and the DaemonSet running
// imageRef (which the nodes must already have: the pull policy is
// IfNotPresent, so a :latest tag would not force a pull either).
func Manifest(imageRef string) []byte {
	return []byte(strings.Replace(manifest, "image: IMAGE", "image: "+strconv.Quote(imageRef), 1))
}
