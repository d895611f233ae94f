"""A labelled PII corpus for the pii-detector: (text, the detected types in order, the masked text).

The masks are the default ones (`redaction_method` mask, `preserve_format` true).
Entries with no types are near misses that must pass untouched: Luhn-invalid
card numbers, invalid SSN areas, UUIDs, commit shas, `sk-` inside a word,
placeholder keys, low-entropy values.
"""

from __future__ import annotations

from typing import NamedTuple


class Case(NamedTuple):
    text: str
    types: tuple[str, ...]
    masked: str


CORPUS: list[Case] = [
    # ------------------------------------------------------------ card numbers (Luhn-checked)
    Case("Card: 4111 1111 1111 1111.", ("credit-card",), "Card: **** **** **** 1111."),
    Case("Card: 4111-1111-1111-1111", ("credit-card",), "Card: ****-****-****-1111"),
    Case("Card 378282246310005 on file", ("credit-card",), "Card ***********0005 on file"),
    Case("Card 5555555555554444 expires 12/27", ("credit-card",), "Card ************4444 expires 12/27"),
    Case("Card 4012 8888 8888 1881 ok", ("credit-card",), "Card **** **** **** 1881 ok"),
    Case("Luhn-invalid 4111 1111 1111 1112 stays", (), "Luhn-invalid 4111 1111 1111 1112 stays"),
    Case("Luhn-invalid 4012888888881882 stays", (), "Luhn-invalid 4012888888881882 stays"),
    Case("Order 1234 5678 9012 3456 is an order id", (), "Order 1234 5678 9012 3456 is an order id"),
    # ------------------------------------------------------------ phones, international formats
    Case("Call +1 415-555-0132 today", ("phone",), "Call +X XXX-XXX-0132 today"),
    Case("London office: +44 20 7946 0958", ("phone",), "London office: +XX XX XXXX 0958"),
    Case("US: (415) 555-0132", ("phone",), "US: (XXX) XXX-0132"),
    Case("Berlin +49 30 901820", ("phone",), "Berlin +XX XX XX1820"),
    Case("Paris +33 1 42 68 53 00", ("phone",), "Paris +XX X XX XX 53 00"),
    Case("Tokyo +81 3-1234-5678", ("phone",), "Tokyo +XX X-XXXX-5678"),
    Case("Mumbai +91 98765 43210", ("phone",), "Mumbai +XX XXXXX X3210"),
    Case("Toll free 1-800-555-0199", ("phone",), "Toll free X-XXX-XXX-0199"),
    Case("Dotted 415.555.0132", ("phone",), "Dotted XXX.XXX.0132"),
    Case("Released 2024-05-01 as version 2.4.10", (), "Released 2024-05-01 as version 2.4.10"),
    Case("Room 1234, extension 56, floor +3", (), "Room 1234, extension 56, floor +3"),
    # ------------------------------------------------------------ email
    Case("Contact john.doe@example.com.", ("email",), "Contact j******e@*******.com."),
    Case("cc jane@mail.example.org please", ("email",), "cc j**e@****.example.org please"),
    Case("short ab@x.io", ("email",), "short **@*.io"),
    Case("not an email: user@localhost or @handle", (), "not an email: user@localhost or @handle"),
    # ------------------------------------------------------------ national ids
    Case("SSN 123-45-6789", ("ssn",), "SSN ***-**-6789"),
    Case("Invalid: 000-12-3456, 666-12-3456, 912-34-5678", (), "Invalid: 000-12-3456, 666-12-3456, 912-34-5678"),
    Case("NI number AB 12 34 56 C", ("national-id",), "NI number ** ** *4 56 C"),
    # ------------------------------------------------------------ IP addresses
    Case("from 192.168.1.23 at noon", ("ip-address",), "from 192.***.*.** at noon"),
    Case("v6 2001:db8::ff00:42:8329", ("ip-address",), "v6 2001:***::****:**:****"),
    Case("no IPs: 999.1.1.1, 1.2.3, 12:30:45, std::vector", (), "no IPs: 999.1.1.1, 1.2.3, 12:30:45, std::vector"),
    # ------------------------------------------------------------ keys that look like secrets
    Case("key sk-proj-4f9Qk2LmZx81VbN7cT0pWq3R", ("api-key",), "key sk-proj-************************"),
    Case("cloud key AKIAIOSFODNN7EXAMPLE", ("api-key",), "cloud key AKIA****************"),
    Case(
        "gh ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        ("api-key",),
        "gh ghp_************************************",
    ),
    Case("chat token xoxb-2048-aB3dE5fG7hJ9", ("api-key",), "chat token xoxb-*****************"),
    Case("pay key sk_live_4eC39HqLyjWDarjtT1zdp7dc", ("api-key",), "pay key sk_live_************************"),
    Case("api_key=Zx9kQ2mP7vL4tR8wY3nB", ("api-key",), "api_key=Zx9k****************"),
    Case('client_secret = "p8N2qL5vX9mK3rT7wZ1c"', ("api-key",), 'client_secret = "p8N2****************"'),
    # ------------------------------------------------------------ ... and strings that are not secrets
    Case(
        "request id 550e8400-e29b-41d4-a716-446655440000",
        (),
        "request id 550e8400-e29b-41d4-a716-446655440000",
    ),
    Case(
        "token: 550e8400-e29b-41d4-a716-446655440000",
        (),
        "token: 550e8400-e29b-41d4-a716-446655440000",
    ),
    Case(
        "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday",
        (),
        "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 yesterday",
    ),
    Case(
        "the task-force met; desk-organizer-deluxe-edition-2024",
        (),
        "the task-force met; desk-organizer-deluxe-edition-2024",
    ),
    Case("sk-this-is-not-a-real-key-at-all", (), "sk-this-is-not-a-real-key-at-all"),
    Case("api_key=your_api_key_goes_here", (), "api_key=your_api_key_goes_here"),
    Case("password=aaaaaaaaaaaaaaaaaaaaaaaa", (), "password=aaaaaaaaaaaaaaaaaaaaaaaa"),
    Case("AKIA1234 is too short", (), "AKIA1234 is too short"),
    # ------------------------------------------------------------ IBAN, addresses, mixed
    Case("IBAN GB82 WEST 1234 5698 7654 32", ("iban",), "IBAN GB** **** **** **** **54 32"),
    Case("bad IBAN GB82 WEST 1234 5698 7654 33", (), "bad IBAN GB82 WEST 1234 5698 7654 33"),
    Case("Ship to 221B Baker Street, London", ("address",), "Ship to 2*** ***** *****t, London"),
    Case("1600 Pennsylvania Avenue", ("address",), "1*** ************ *****e"),
    Case("I ate 3 apples on the street", (), "I ate 3 apples on the street"),
    Case(
        "Email a.b@test.com or call +1 415-555-0132, card 4111111111111111",
        ("email", "phone", "credit-card"),
        "Email a*b@****.com or call +X XXX-XXX-0132, card ************1111",
    ),
]
