// Row readers and statement helpers shared by the Store's source files. Every function
// here runs inside a transaction the caller holds.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "db/records.h"
#include "db/sqlite.h"

namespace mono::db::internal {

// SELECT lists (with FROM) whose rows the read_* functions below decode.
extern const char* const kWorkerSelect;      // ... FROM workers w
extern const char* const kSubmissionSelect;  // ... FROM submissions s
extern const char* const kTaskSelect;        // ... FROM tasks t
extern const char* const kJobSelect;         // ... FROM jobs j LEFT JOIN tasks t
extern const char* const kResultSelect;      // ... FROM results r JOIN jobs j
// A WHERE condition on jobs j: the jobs of a submission, i.e. those of its tasks (whichever
// submission created them) and its own jobs without a task (whole-kernel timing).
// Parameter ?1 is the submission id.
extern const char* const kSubmissionJobs;

WorkerRecord read_worker(const sql::Stmt& s);
SubmissionRecord read_submission(const sql::Stmt& s);
TaskRecord read_task(const sql::Stmt& s);
JobRecord read_job(const sql::Stmt& s);
ResultRecord read_result(const sql::Stmt& s);

absl::StatusOr<std::optional<JobRecord>> load_job(sqlite3* db, const std::string& id);
absl::StatusOr<bool> submission_exists(sqlite3* db, const std::string& id);

absl::StatusOr<AddTaskResult> insert_task(sqlite3* db, int64_t now, const std::string& signature,
                                          const std::string& gpu_kind, const std::string& context,
                                          const std::string& payload);
absl::Status insert_link(sqlite3* db, const std::string& submission_id, int64_t task_id, int instances = 1);
// False when the id exists.
absl::StatusOr<bool> insert_job(sqlite3* db, int64_t now, const NewJob& job);

}  // namespace mono::db::internal
