using MuxWatch.Hosting;

namespace MuxWatch.Tool.Api;

/// <summary>What the API refused, by reason, shown as <c>postsRefused</c> in <c>GET /api/status</c>: refusals are never silent.</summary>
internal sealed class ApiStatistics : IMuxWatchStatusSection
{
    private long _tooLarge;
    private long _notText;
    private long _empty;
    private long _unreadable;
    private long _busy;
    private long _timedOut;
    private long _aborted;

    public void CountRefusal(int status)
    {
        switch (status)
        {
            case StatusCodes.Status413PayloadTooLarge: Interlocked.Increment(ref _tooLarge); break;
            case StatusCodes.Status415UnsupportedMediaType: Interlocked.Increment(ref _notText); break;
            case StatusCodes.Status400BadRequest: Interlocked.Increment(ref _empty); break;
            case StatusCodes.Status422UnprocessableEntity: Interlocked.Increment(ref _unreadable); break;
            case StatusCodes.Status429TooManyRequests: Interlocked.Increment(ref _busy); break;
            case StatusCodes.Status408RequestTimeout: Interlocked.Increment(ref _timedOut); break;
            default: break;
        }
    }

    /// <summary>A client that went away mid-upload: counted, never logged as an error.</summary>
    public void CountAborted() => Interlocked.Increment(ref _aborted);

    public string Name => "postsRefused";

    public IReadOnlyDictionary<string, long> Counts() => new OrderedDictionary<string, long>
    {
        ["too-large"] = Interlocked.Read(ref _tooLarge),
        ["not-text"] = Interlocked.Read(ref _notText),
        ["empty-or-invalid"] = Interlocked.Read(ref _empty),
        ["not-a-redis-message"] = Interlocked.Read(ref _unreadable),
        ["busy"] = Interlocked.Read(ref _busy),
        ["body-too-slow"] = Interlocked.Read(ref _timedOut),
        ["aborted"] = Interlocked.Read(ref _aborted),
    };
}
