using System.Globalization;
using System.Text.Json;
using MuxWatch.Reading;

namespace MuxWatch.Tool.Input;

/// <summary>
/// One JSON line as apps, log shippers and <c>explain --jsonl</c> send it: an object with a
/// <c>message</c> string and an optional <c>time</c> (ISO 8601 or unix seconds). Read the same way by
/// <c>POST /api/timeouts</c> and <c>explain</c>.
/// </summary>
/// <param name="Message">The message text.</param>
/// <param name="Time">The time the line gives, when it gives a usable one.</param>
/// <param name="TimeProblem">Why the line's <c>time</c> cannot be used, when it has one that cannot.</param>
internal readonly record struct MessageLine(string Message, DateTimeOffset? Time, string? TimeProblem)
{
    /// <summary>Deeper nesting is refused: no message line needs it, and a deep document costs the parser.</summary>
    private const int MaxJsonDepth = 8;

    private static readonly DateTimeOffset EarliestTime = new(2000, 1, 1, 0, 0, 0, TimeSpan.Zero);

    /// <summary>Reads <paramref name="line"/>; false with a reason (never a secret) when it holds no message.</summary>
    public static bool TryParse(string line, DateTimeOffset now, out MessageLine parsed, out string error)
    {
        parsed = default;
        error = string.Empty;
        try
        {
            using var document = JsonDocument.Parse(line, new JsonDocumentOptions { MaxDepth = MaxJsonDepth });
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object
                || !root.TryGetProperty("message", out var messageElement)
                || messageElement.ValueKind != JsonValueKind.String
                || string.IsNullOrWhiteSpace(messageElement.GetString()))
            {
                error = "the line has no \"message\" string";
                return false;
            }

            var message = messageElement.GetString()!;
            if (!root.TryGetProperty("time", out var timeElement))
            {
                parsed = new MessageLine(message, null, null);
            }
            else if (TryReadTime(timeElement, now, out var time))
            {
                parsed = new MessageLine(message, time, null);
            }
            else
            {
                parsed = new MessageLine(message, null, "\"time\" is neither an ISO 8601 date nor unix seconds between 2000 and a day from now");
            }

            return true;
        }
        catch (JsonException ex)
        {
            error = SecretRedactor.Redact($"the line is not JSON ({ex.Message})");
            return false;
        }
    }

    private static bool TryReadTime(JsonElement element, DateTimeOffset now, out DateTimeOffset time)
    {
        time = default;
        switch (element.ValueKind)
        {
            case JsonValueKind.String:
                return DateTimeOffset.TryParse(element.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out time)
                    && IsSane(time, now);
            case JsonValueKind.Number when element.TryGetDouble(out var seconds) && seconds is > 0 and < 253_402_300_799:
                time = DateTimeOffset.FromUnixTimeMilliseconds((long)(seconds * 1000));
                return IsSane(time, now);
            default:
                return false;
        }
    }

    /// <summary>A reported time MuxWatch can use: from 2000 to a day ahead of its own clock (a skewed shipper, not year 1 or 9999).</summary>
    private static bool IsSane(DateTimeOffset time, DateTimeOffset now) =>
        time >= EarliestTime && time <= now + TimeSpan.FromDays(1);
}
