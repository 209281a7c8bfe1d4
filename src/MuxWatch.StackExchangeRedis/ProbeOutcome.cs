using MuxWatch.Reading;

namespace MuxWatch.StackExchangeRedis;

/// <summary>A watched multiplexer's last success and last error, as <c>/api/targets</c> shows them (redacted, bounded).</summary>
internal sealed class ProbeOutcome(TimeProvider time)
{
    private const int MaxErrorChars = 300;

    private volatile Outcome? _lastError;
    private DateTimeOffset? _lastSuccess;

    public DateTimeOffset? LastSuccess => _lastSuccess;

    public (string Message, DateTimeOffset Time)? LastError => _lastError is { } error ? (error.Message, error.Time) : null;

    public void Succeeded(WatchedEndpoint endpoint, DateTimeOffset now)
    {
        endpoint.Succeeded(now);
        _lastSuccess = now;
    }

    public void Failed(string message)
    {
        var redacted = SecretRedactor.Redact(message);
        _lastError = new Outcome(redacted.Length > MaxErrorChars ? redacted[..MaxErrorChars] : redacted, time.GetUtcNow());
    }

    private sealed record Outcome(string Message, DateTimeOffset Time);
}
