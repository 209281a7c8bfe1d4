using MuxWatch.StackExchangeRedis;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests;

/// <summary>
/// Who sent a slow command and what it was, as <c>SLOWLOG GET</c> answers (Redis 4.0 and later: id, time, duration,
/// arguments, client address, client name): the command and its first argument only, redacted where it can carry a
/// secret, and every text bounded and readable whatever the server sends. Built with the client's own reply type.
/// </summary>
public sealed class SlowlogReplyTests
{
    private static readonly long Now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();

    [Fact]
    public void The_poller_asks_for_as_many_entries_as_the_core_takes_from_one_poll() =>
        Assert.Equal(MuxWatch.Tracking.ServerStateTracker.MaxSlowlogEntriesPerPoll, EndpointPollReader.SlowlogBatch);

    private static RedisResult Entry(string? address, string? name, params string[] arguments)
    {
        List<RedisResult> parts =
        [
            RedisResult.Create((RedisValue)7),
            RedisResult.Create((RedisValue)Now),
            RedisResult.Create((RedisValue)2_140_000),
            RedisResult.Create([.. arguments.Select(a => RedisResult.Create((RedisValue)a))]),
        ];
        if (address is not null)
        {
            parts.Add(RedisResult.Create((RedisValue)address));
            parts.Add(RedisResult.Create((RedisValue)(name ?? string.Empty)));
        }

        return RedisResult.Create([.. parts]);
    }

    private static SlowlogEntry ReadOne(RedisResult entry, Func<string?, string?>? knownAs = null)
    {
        var dropped = new List<string>();
        var entries = SlowlogReply.Read(RedisResult.Create([entry]), 64, dropped, knownAs);
        Assert.Empty(dropped);
        return Assert.Single(entries);
    }

    [Fact]
    public void The_sender_and_the_first_argument_are_read_and_the_rest_is_not()
    {
        var entry = ReadOne(Entry("10.0.0.7:52110", "nightly-export", "keys", "*", "extra"), name => name == "nightly-export" ? "known" : null);

        Assert.Equal(("KEYS", "*", "10.0.0.7:52110", "nightly-export", "known"), (entry.Command, entry.Argument, entry.ClientAddress, entry.ClientName, entry.SentBy));
        Assert.Equal(TimeSpan.FromMilliseconds(2140), entry.Duration);
    }

    [Fact]
    public void A_client_without_a_name_and_a_command_without_arguments_read_as_none()
    {
        var entry = ReadOne(Entry("127.0.0.1:6000", name: null, "FLUSHALL"));

        Assert.Equal(("127.0.0.1:6000", null, null), (entry.ClientAddress, entry.ClientName, entry.Argument));
    }

    [Fact]
    public void A_server_older_than_4_0_records_no_client()
    {
        var entry = ReadOne(Entry(address: null, name: null, "SORT", "big"));

        Assert.Equal(("SORT", "big", null, null), (entry.Command, entry.Argument, entry.ClientAddress, entry.ClientName));
    }

    [Theory]
    [InlineData("AUTH", "hunter2")]
    [InlineData("auth", "default")]
    [InlineData("HELLO", "3")]
    [InlineData("MIGRATE", "10.0.0.8")]
    [InlineData("ACL", "SETUSER")]
    [InlineData("SENTINEL", "SET")]
    public void Commands_that_carry_secrets_never_show_an_argument(string command, string argument)
    {
        var entry = ReadOne(Entry("127.0.0.1:6000", "app", command, argument, "secret"));

        Assert.Equal(SlowlogReply.Redacted, entry.Argument);
    }

    [Fact]
    public void Megabyte_long_names_arguments_and_addresses_are_bounded()
    {
        var huge = new string('k', 1 << 20);
        var entry = ReadOne(Entry(huge, huge, "GET", huge));

        Assert.All([entry.ClientAddress, entry.ClientName], text =>
        {
            Assert.Equal(SlowlogReply.MaxTextLength + 1, text!.Length);
            Assert.EndsWith("…", text, StringComparison.Ordinal);
        });
        Assert.Equal(SlowlogReply.MaxArgumentLength + 1, entry.Argument!.Length); // Redis's own bound: a key it shows whole stays whole
        Assert.EndsWith("…", entry.Argument, StringComparison.Ordinal);
    }

    [Fact]
    public void Control_and_formatting_characters_never_reach_a_line()
    {
        var entry = ReadOne(Entry("127.0.0.1:1\r\nforged: line", "a\u202Eb\u0007", "GET", "cart:\n<script>alert(1)</script>"));

        Assert.Equal("127.0.0.1:1??forged: line", entry.ClientAddress);
        Assert.Equal("a?b?", entry.ClientName);
        // Markup is kept as text: the page and the log write it as text, never as markup.
        Assert.Equal("cart:?<script>alert(1)</script>", entry.Argument);
    }

    [Fact]
    public void A_client_field_that_is_not_text_loses_the_sender_not_the_entry()
    {
        var entry = RedisResult.Create(
        [
            RedisResult.Create((RedisValue)3),
            RedisResult.Create((RedisValue)Now),
            RedisResult.Create((RedisValue)1_000_000),
            RedisResult.Create([RedisResult.Create((RedisValue)"KEYS"), RedisResult.Create((RedisValue)"*")]),
            RedisResult.Create([RedisResult.Create((RedisValue)"nested"), RedisResult.Create((RedisValue)"twice")]),
            RedisResult.Create((RedisValue)"job"),
        ]);

        var read = ReadOne(entry);

        Assert.Equal(("KEYS", "*", null, null), (read.Command, read.Argument, read.ClientAddress, read.ClientName));
    }
}
