using MuxWatch.Json;

namespace MuxWatch.Tool.Api;

/// <summary>The answer of <c>POST /api/timeouts</c>.</summary>
/// <param name="Accepted">Messages read and recorded.</param>
/// <param name="Rejected">Lines that could not be used.</param>
/// <param name="Results">One per message, in order: a <see cref="LineSummaryAnswer"/> (a <see cref="TimeoutAnswer"/> for a text body, or with <c>?details=true</c>) or a <see cref="LineErrorAnswer"/>.</param>
internal sealed record PostAnswer(int Accepted, int Rejected, IReadOnlyList<object> Results);
