module qtls/tests/tcp/go_peer

go 1.19
