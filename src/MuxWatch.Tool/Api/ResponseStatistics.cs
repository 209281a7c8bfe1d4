using System.Collections.Concurrent;
using System.Globalization;
using MuxWatch.Hosting;

namespace MuxWatch.Tool.Api;

/// <summary>
/// Every answer of 400 or above, by status, shown as <c>refusedByStatus</c> in <c>GET /api/status</c>:
/// refusals made by the framework (404, 405, a bad query, a request timeout) are never silent either.
/// </summary>
internal sealed class ResponseStatistics : IMuxWatchStatusSection
{
    private readonly ConcurrentDictionary<int, long> _byStatus = new();

    public string Name => "refusedByStatus";

    /// <summary>Counts the answer's status when it is a refusal (HTTP statuses are a bounded set).</summary>
    public void Count(int status)
    {
        if (status is >= 400 and <= 599)
        {
            _byStatus.AddOrUpdate(status, 1, static (_, count) => count + 1);
        }
    }

    public IReadOnlyDictionary<string, long> Counts() =>
        new SortedDictionary<string, long>(_byStatus.ToDictionary(p => p.Key.ToString(CultureInfo.InvariantCulture), p => p.Value), StringComparer.Ordinal);
}
