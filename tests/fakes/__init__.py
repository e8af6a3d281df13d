"""The fakes the tests talk to over real sockets: GitHub (``github``) and Kimi K3 (``k3``)."""
