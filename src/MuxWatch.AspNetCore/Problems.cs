using System.ComponentModel;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.WebUtilities;
using MuxWatch.Json;

namespace MuxWatch.AspNetCore;

/// <summary>MuxWatch's refusals over HTTP: problem details, the same for the library's endpoints and the sidecar's.</summary>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): the service answers as the API does
public static class Problems
{
    /// <summary>The answer for a refusal with <paramref name="status"/> because of <paramref name="reason"/>.</summary>
    public static ProblemAnswer Answer(int status, string reason) => ProblemAnswer.For(status, ReasonPhrases.GetReasonPhrase(status), reason);

    /// <summary>The refusal as a result to return from an endpoint.</summary>
    public static IResult Result(int status, string reason) => Result(Answer(status, reason));

    /// <summary><paramref name="problem"/> as a result, with its status and content type.</summary>
    public static IResult Result(ProblemAnswer problem)
    {
        ArgumentNullException.ThrowIfNull(problem);
        return Results.Json(problem, MuxWatchJson.TypeInfo<ProblemAnswer>(), ProblemAnswer.ContentType, problem.Status);
    }
}
