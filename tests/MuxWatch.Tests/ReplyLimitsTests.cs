using MuxWatch.StackExchangeRedis;

namespace MuxWatch.Tests;

/// <summary>What is kept of one INFO reply that passed its size check (issue 26, #5): fields, names and values bounded.</summary>
public sealed class ReplyLimitsTests
{
    [Fact]
    public void Info_fields_are_read_as_the_client_reads_them_headers_and_blank_lines_skipped()
    {
        var fields = ReplyLimits.ParseInfo("# Persistence\r\nloading:0\r\nrdb_last_bgsave_status:ok\r\n\r\nexecutable:/usr/bin/redis-server:odd\r\n", []);

        Assert.Equal("0", fields["loading"]);
        Assert.Equal("ok", fields["rdb_last_bgsave_status"]);
        Assert.Equal("/usr/bin/redis-server:odd", fields["executable"]); // split at the first colon only
        Assert.Equal(3, fields.Count);
    }

    [Fact]
    public void A_reply_of_too_many_or_too_long_fields_keeps_the_first_and_the_short_ones_only()
    {
        var text = "total_forks:7\r\n" + $"long_value:{new string('x', ReplyLimits.MaxInfoFieldChars + 1)}\r\n" + $"{new string('n', ReplyLimits.MaxInfoFieldChars + 1)}:1\r\n"
            + string.Concat(Enumerable.Range(0, 5000).Select(i => $"f{i}:{i}\r\n"));

        var fields = ReplyLimits.ParseInfo(text, []);

        Assert.Equal("7", fields["total_forks"]);
        Assert.False(fields.ContainsKey("long_value"));
        Assert.DoesNotContain(fields.Keys, key => key.Length > ReplyLimits.MaxInfoFieldChars);
        Assert.Equal(ReplyLimits.MaxInfoFields, fields.Count);
    }
}
