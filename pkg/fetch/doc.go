// Package fetch brings the files a distro definition names into a package:
// http(s) downloads with retries, resume and a verified content cache, local
// files, and single entries out of tar, tar.gz, tar.zst and zip
// archives. Every byte is streamed; nothing is held in memory, and a file
// whose sha256 is not the expected one is an error, never a warning.
package fetch
