"""Transport: performing the call path's effects (`drivers`) with an httpx client
(`http_client`), answers decoded within a size budget (`content_coding`)."""
