using MuxWatch.AspNetCore;
using MuxWatch.Json;

namespace MuxWatch.Tool.Api;

/// <summary>The status and body of one <c>POST /api/timeouts</c> answer.</summary>
internal sealed record PostOutcome(int Status, object Body)
{
    public static PostOutcome Refused(int status, string reason) => new(status, Problems.Answer(status, reason));

    /// <summary>200 with one result per message; 400 when no line was usable.</summary>
    public static PostOutcome Answered(IReadOnlyList<object> results)
    {
        var accepted = results.Count(result => result is TimeoutAnswer or LineSummaryAnswer);
        return new PostOutcome(
            accepted == 0 ? StatusCodes.Status400BadRequest : StatusCodes.Status200OK,
            new PostAnswer(accepted, results.Count - accepted, results));
    }
}
