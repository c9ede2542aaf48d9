module qtls/tests/pq/quic/go_side

go 1.24
