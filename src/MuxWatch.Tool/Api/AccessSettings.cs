namespace MuxWatch.Tool.Api;

/// <summary>The rules every access setting follows (a bearer token, a port of its own), written once for <c>MuxWatch:Api</c> and <c>MuxWatch:Metrics</c>.</summary>
internal static class AccessSettings
{
    /// <summary>The shortest token accepted: shorter ones are guessable.</summary>
    public const int MinTokenLength = 16;

    /// <summary>A token, when set, is long enough and compared exactly, so no whitespace around it (its value is never shown).</summary>
    public static void CheckToken(List<string> failures, string setting, string? token)
    {
        if (string.IsNullOrEmpty(token))
        {
            return;
        }

        if (token.Length < MinTokenLength)
        {
            failures.Add($"{setting} must be at least {MinTokenLength} characters when set (its value is not shown).");
        }

        if (token.Trim().Length != token.Length)
        {
            failures.Add($"{setting} must not start or end with whitespace: it is compared exactly (its value is not shown).");
        }
    }

    /// <summary>A port, when set, is a port number.</summary>
    public static void CheckPort(List<string> failures, string setting, int? port)
    {
        if (port is not null and not (>= 1 and <= 65535))
        {
            failures.Add($"{setting} must be a port number (1 to 65535) (was {port}).");
        }
    }

    /// <summary>A number within its range.</summary>
    public static void CheckRange(List<string> failures, string setting, long value, long min, long max)
    {
        if (value < min || value > max)
        {
            failures.Add($"{setting} must be between {min} and {max} (was {value}).");
        }
    }
}
