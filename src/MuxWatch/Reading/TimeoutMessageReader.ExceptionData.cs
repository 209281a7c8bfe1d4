using System.Collections;
using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Reading;

/// <content>Reading the structured <c>Exception.Data["Redis-..."]</c> values.</content>
public static partial class TimeoutMessageReader
{
    /// <summary>
    /// Long names under which StackExchange.Redis stores each field in <see cref="Exception.Data"/>
    /// (as <c>Redis-&lt;long name&gt;</c>), mapped to the short key the message text uses.
    /// 3.x names first; the 1.x names that differ follow.
    /// </summary>
    private static readonly Dictionary<string, string> DataKeyToField = new(StringComparer.OrdinalIgnoreCase)
    {
        ["OpsSinceLastHeartbeat"] = "inst",
        ["Queue-Awaiting-Write"] = "qu",
        ["Queue-Awaiting-Response"] = "qs",
        ["Active-Writer"] = "aw",
        ["Backlog-Writer"] = "bw",
        ["Read-State"] = "rs",
        ["Write-State"] = "ws",
        ["Inbound-Bytes"] = "in",
        ["Inbound-Pipe-Bytes"] = "in-pipe",
        ["Outbound-Pipe-Bytes"] = "out-pipe",
        ["Last-Result-Bytes"] = "last-in",
        ["Inbound-Buffer-Bytes"] = "cur-in",
        ["Live-Multiplexers"] = "lm",
        ["Sync-Ops"] = "sync-ops",
        ["Async-Ops"] = "async-ops",
        ["Server-Endpoint"] = "serverEndpoint",
        ["Server-Connected-Seconds"] = "conn-sec",
        ["Abort-On-Connect"] = "aoc",
        ["Multiplexer-Connects"] = "mc",
        ["Client-Name"] = "clientName",
        ["Key-HashSlot"] = "keyHashSlot",
        ["ThreadPool-IO-Completion"] = "IOCP",
        ["ThreadPool-Workers"] = "WORKER",
        ["ThreadPool-Items"] = "POOL",
        ["Version"] = "v",
        ["Timeout"] = "timeout",
        ["OutboundDeltaKB"] = "outbound",
        ["InboundDeltaKB"] = "inbound",
        ["Message-Current"] = "active",
        ["Message-Next"] = "next",
        ["Instantaneous"] = "inst",
        ["Queue-Length"] = "queue",
        ["Queue-Outstanding"] = "qu",
        ["Queue-Completion-Outstanding"] = "qc",
        ["Active-Writers"] = "wr",
        ["Write-Queue"] = "wq",
        ["Active-Readers"] = "ar",
        ["Manager"] = "mgr",
        ["Local-CPU"] = "Local-CPU",
    };

    private static RedisErrorReport MergeData(RedisErrorReport fromText, string? exceptionType, IDictionary data)
    {
        if (data.Count == 0)
        {
            return fromText.ExceptionType is null && exceptionType is not null ? WithType(fromText, exceptionType) : fromText;
        }

        var builder = ReportBuilder.From(fromText);
        builder.ExceptionType = exceptionType ?? fromText.ExceptionType;
        foreach (DictionaryEntry entry in data)
        {
            if (entry.Key is not string key || entry.Value is null)
            {
                continue;
            }

            var value = SecretRedactor.Redact(Convert.ToString(entry.Value, CultureInfo.InvariantCulture) ?? string.Empty);
            if (string.Equals(key, "redis-command", StringComparison.OrdinalIgnoreCase))
            {
                var space = value.IndexOf(' ', StringComparison.Ordinal);
                builder.SetCommand(space < 0 ? value : value[..space]);
            }
            else if (string.Equals(key, "redis-server", StringComparison.OrdinalIgnoreCase))
            {
                builder.SetEndpoint(value);
            }
            else if (key.StartsWith("Redis-", StringComparison.OrdinalIgnoreCase)
                && DataKeyToField.TryGetValue(key["Redis-".Length..], out var field))
            {
                builder.SetField(field, FieldValueReader.Parse(value));
            }
        }

        return builder.Build();
    }

    private static RedisErrorReport WithType(RedisErrorReport report, string exceptionType)
    {
        var builder = ReportBuilder.From(report);
        builder.ExceptionType = exceptionType;
        return builder.Build();
    }
}
