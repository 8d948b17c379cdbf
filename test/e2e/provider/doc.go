// Package provider holds the provider's acceptance tests: a real
// Terraform (or OpenTofu) binary drives cargoship_cluster against a
// container fleet of its own (fleet "tfacc": one controller, two workers)
// with the test engine's packages, and every step's effect is checked from
// inside the hosts (docs/provider.md, "Tests"). They need root, as the
// fleet does, and a terraform or tofu binary on PATH (or
// TF_ACC_TERRAFORM_PATH).
package provider
